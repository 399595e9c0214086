"""Discrimination pages through the test client: the analysis page (headline, table, chart,
downloads), the new-analysis form and its refusals, the sections on the version, DEC evaluation
and comparison pages, who may see them; the API and the command."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from difficulty.services import run_difficulty_evaluation, start_difficulty_evaluation
from ranking.subsets import services
from ranking.subsets.models import DiscriminationAnalysis
from tests.factories import UserFactory
from tests.ranking.support import dataset_rows, make_dataset, make_version, tiered_scores
from tests.ranking.support import version_items as frozen_items

pytestmark = pytest.mark.django_db

HOSTILE = "=sys&<b>_$1"
FAST = {"test": "permutation", "n_resamples": 99, "n_random": 3}


@pytest.fixture
def dataset():
    scores = tiered_scores(40)
    scores[HOSTILE] = scores.pop("alpha")
    return make_dataset("tiers", dataset_rows(scores))


@pytest.fixture
def finished(dataset):
    analysis = services.start_analysis(
        subject_kind="hardest", dataset=dataset, estimator="oracle", fractions=[0.25, 0.5],
        enqueue=False, **FAST,
    )  # fmt: skip
    return services.run_in_foreground(analysis.pk)


def test_the_analysis_page_shows_the_headline_table_chart_and_downloads(admin_client, finished):
    response = admin_client.get(reverse("ranking:discrimination_detail", args=[finished.pk]))

    html = response.content.decode()
    assert response.status_code == 200
    assert "separates systems:" in html and "vs random" in html
    assert "Clusters (stepwise, Zouhar et al. 2025a)" in html and "(25%)" in html
    assert "=sys&amp;&lt;b&gt;_$1" in html and "<b>_" not in html
    for name in ("discrimination_chart", "discrimination_csv", "discrimination_json"):
        assert reverse(f"ranking:{name}", args=[finished.pk]) in html


def test_the_chart_and_the_downloads(admin_client, finished):
    chart = admin_client.get(reverse("ranking:discrimination_chart", args=[finished.pk]))
    assert chart["Content-Type"] == "image/svg+xml" and chart.content.startswith(b"<?xml")

    text = admin_client.get(reverse("ranking:discrimination_csv", args=[finished.pk]))
    rows = list(csv.reader(io.StringIO(text.content.decode())))
    assert rows[0] == ["part", "label", "fraction", "size", "measure", "value", "random_mean",
                       "random_sd"]  # fmt: skip
    subset_rows = [r for r in rows if r[0] == "subset"]
    assert len(subset_rows) == 2 * 8 and {r[3] for r in subset_rows} == {"10", "20"}

    data = admin_client.get(reverse("ranking:discrimination_json", args=[finished.pk]))
    assert json.loads(data.content) == finished.result
    assert (
        data["Content-Disposition"] == f'attachment; filename="discrimination-{finished.pk}.json"'
    )


def test_an_unfinished_analysis_has_no_chart_yet_and_its_page_polls(admin_client, dataset):
    analysis = services.start_analysis(subject_kind="hardest", dataset=dataset,
                                       estimator="oracle", enqueue=False, **FAST)  # fmt: skip

    page = admin_client.get(reverse("ranking:discrimination_detail", args=[analysis.pk]))
    chart = admin_client.get(reverse("ranking:discrimination_chart", args=[analysis.pk]))

    assert 'hx-trigger="every 1s"' in page.content.decode() and "0 / 11 rounds" in (
        page.content.decode()
    )
    assert chart.status_code == 409


def test_the_form_starts_an_analysis_or_names_why_it_cannot(admin_client, dataset, sent_tasks):
    url = reverse("ranking:discrimination_new")
    version = make_version(frozen_items({"a": [70.0, 60.0], "b": [50.0, 40.0]}))

    preset = admin_client.get(url, {"version": version.pk})
    refused = admin_client.post(url, {"subject_kind": "version", "version": version.pk,
                                      "test": "permutation", "n_resamples": 99, "n_random": 3,
                                      "alpha": 0.05, "seed": 0})  # fmt: skip
    started = admin_client.post(url, {"subject_kind": "hardest", "dataset": dataset.pk,
                                      "estimator": "oracle", "fractions": "10, 50%",
                                      "test": "wilcoxon", "n_resamples": 1000, "n_random": 5,
                                      "alpha": 0.05, "seed": 3})  # fmt: skip
    bad_sizes = admin_client.post(url, {"subject_kind": "hardest", "dataset": dataset.pk,
                                        "estimator": "oracle", "fractions": "10 nan",
                                        "test": "wilcoxon", "n_resamples": 1, "n_random": 5,
                                        "alpha": 0.05, "seed": 3})  # fmt: skip

    assert preset.status_code == 200 and f'<option value="{version.pk}" selected>' in (
        preset.content.decode()
    )
    assert refused.status_code == 400
    assert "none from a difficulty dataset" in refused.content.decode()
    analysis = DiscriminationAnalysis.objects.get()
    assert started.status_code == 302 and started["Location"] == reverse(
        "ranking:discrimination_detail", args=[analysis.pk]
    )
    assert (analysis.fractions, analysis.test, analysis.seed) == ([0.1, 0.5], "wilcoxon", 3)
    assert bad_sizes.status_code == 400 and "&#x27;nan&#x27; is not a percentage" in (
        bad_sizes.content.decode()
    )


def test_the_version_row_section_loads_its_refusal_or_its_headline(admin_client, dataset):
    version = make_version(frozen_items({"a": [70.0, 60.0], "b": [50.0, 40.0]}))
    set_page = admin_client.get(
        reverse("challenge_sets:set_detail", args=[version.challenge_set.pk])
    )
    section_url = reverse("ranking:discrimination_section_version", args=[version.pk])

    section = admin_client.get(section_url)

    assert f'hx-get="{section_url}"' in set_page.content.decode()
    assert "cannot be measured" in section.content.decode()
    assert "none from a difficulty dataset" in section.content.decode()


def test_the_dec_evaluation_page_lists_the_oracle_and_each_estimator(admin_client, dataset):
    evaluation = start_difficulty_evaluation(dataset, ["length"], n_bootstrap=0, enqueue=False)
    evaluation = run_difficulty_evaluation(evaluation.pk)
    analysis = services.start_analysis(subject_kind="hardest", evaluation=evaluation,
                                       estimator="oracle", fractions=[0.25], enqueue=False,
                                       **FAST)  # fmt: skip
    services.run_in_foreground(analysis.pk)
    url = reverse("difficulty:evaluation_detail", args=[evaluation.pk])

    page = admin_client.get(url).content.decode()
    polled = admin_client.get(url, headers={"HX-Request": "true"})

    section = page[page.index("How well the hardest segments separate systems") :]
    assert "human-score oracle" in section and "separates systems:" in section
    assert "<code>length</code>" in section and "not measured" in section
    assert f"?evaluation={evaluation.pk}&amp;estimator=length" in section
    assert polled.status_code == 286 and "separates systems:" in polled.content.decode()


def test_the_comparison_page_has_a_line_per_method(admin_client):
    from search.breaker.demo import FRAGILE, FRAGILE_B
    from search.breaker.services import run_in_foreground, start_breaker_comparison
    from tests.search.breaker_helpers import offline_config

    config = {**offline_config(n_steps=2), "name": "Multi", "targets": [FRAGILE, FRAGILE_B],
              "methods": ["seeds", "breaker_seeded"]}  # fmt: skip
    for run in start_breaker_comparison(config, enqueue=False):
        run_in_foreground(run.pk)
    url = reverse("search:breaker_comparison") + "?name=Multi"
    before = admin_client.get(url).content.decode()
    analysis = services.start_analysis(subject_kind="breaker", comparison="Multi", enqueue=False,
                                       **FAST)  # fmt: skip
    services.run_in_foreground(analysis.pk)

    after = admin_client.get(url).content.decode()

    assert "Measure how well each method's texts separate the translators" in before
    assert "<li>Seeds: separates systems:" in after
    assert "<li>MT-breaker (seeded): separates systems:" in after
    assert reverse("ranking:discrimination_detail", args=[analysis.pk]) in after


def test_sections_and_pages_are_for_staff_and_versions_for_curators(client, finished):
    version = make_version(frozen_items({"a": [70.0, 60.0]}))
    staff = UserFactory(username="staff", is_staff=True)  # not a curator
    client.force_login(staff)

    own = client.get(reverse("ranking:discrimination_detail", args=[finished.pk]))
    version_section = client.get(
        reverse("ranking:discrimination_section_version", args=[version.pk])
    )
    client.force_login(UserFactory(username="outsider"))
    outsider = client.get(reverse("ranking:discrimination_detail", args=[finished.pk]))

    assert own.status_code == 200
    assert version_section.status_code == 404
    assert outsider.status_code == 302  # to the admin login, as every staff page


def test_the_api_starts_reads_refuses_and_exports(admin_user, dataset, sent_tasks):
    api = APIClient()
    api.force_authenticate(admin_user)
    url = "/api/discrimination-analyses/"

    created = api.post(url, {"subject_kind": "hardest", "dataset": dataset.pk,
                             "estimator": "oracle", "fractions": [0.5], **FAST},
                       format="json")  # fmt: skip
    refused = api.post(url, {"subject_kind": "hardest", "dataset": dataset.pk,
                             "estimator": "oracle", "n_randoms": 3}, format="json")  # fmt: skip
    no_estimator = api.post(url, {"subject_kind": "hardest", "dataset": dataset.pk,
                                  "estimator": "length"}, format="json")  # fmt: skip

    assert created.status_code == 201, created.json()
    pk = created.json()["id"]
    assert refused.status_code == 400 and refused.json()["n_randoms"] == ["unknown field"]
    assert no_estimator.status_code == 400
    assert (
        "choose the DEC evaluation that ran length" in no_estimator.json()["errors"]["evaluation"]
    )
    assert api.get(f"{url}{pk}/export/", {"as": "csv"}).status_code == 409
    services.run_in_foreground(pk)
    exported = api.get(f"{url}{pk}/export/", {"as": "csv"}, HTTP_ACCEPT="application/json")
    assert exported.status_code == 200 and exported.content.startswith(b"part,label")
    assert api.get(f"{url}{pk}/").json()["result"]["subsets"][0]["points"][0]["size"] == 20
    api.force_authenticate(UserFactory(username="outsider"))
    assert api.get(f"{url}{pk}/").status_code == 403
    assert DiscriminationAnalysis.objects.count() == 1


def test_the_command_prints_the_subset_against_the_random_band(dataset, capsys):
    call_command("discriminability", "--dataset", "tiers", "--sizes", "25 50", "--random", "3",
                 "--resamples", "99")  # fmt: skip

    out = capsys.readouterr().out
    assert "tiers en-de, hardest by the human-score oracle" in out
    assert "\nhardest by the human-score oracle\n" in out
    assert "10 (25%)" in out and "20 (50%)" in out and " vs " in out
    with pytest.raises(CommandError, match=r"--random: must be an integer from 2 to 200"):
        call_command("discriminability", "--dataset", "tiers", "--random", "1")
    with pytest.raises(CommandError, match="--sizes: '0' is not a percentage"):
        call_command("discriminability", "--dataset", "tiers", "--sizes", "0")
