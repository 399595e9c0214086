"""The ranking pages through the test client: the form and its htmx source fields, refusals that
name the field, the ranking page's table with cluster rules, its charts and its downloads."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.test import Client
from django.urls import reverse

from ranking import services
from ranking.models import SystemRanking
from tests.challenge_sets.conftest import curators_group
from tests.ranking.support import dataset_rows, make_dataset, make_version, tiered_dataset
from tests.ranking.support import version_items as frozen_items

pytestmark = pytest.mark.django_db

HOSTILE = "sys&<b>_$1"


@pytest.fixture
def finished():
    scores = {HOSTILE: [90, 88, 91, 93, 87, 92], "plain": [40, 42, 39, 41, 43, 38],
              "other": [41, 40, 42, 39, 44, 40]}  # fmt: skip
    dataset = make_dataset("hostile", dataset_rows(scores))
    ranking = services.start_ranking(input_kind="dataset", dataset=dataset, enqueue=False)
    return services.run_in_foreground(ranking.pk)


def test_the_ranking_page_draws_clusters_as_rules_and_escapes_names(admin_client, finished):
    response = admin_client.get(reverse("ranking:ranking_detail", args=[finished.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "sys&amp;&lt;b&gt;_$1" in html and "<b>_" not in html
    assert html.count('class="cluster-end"') == 1  # one rule: first system | the other two
    assert "2 clusters" in html
    for name in ("heatmap", "means", "download_csv", "download_latex", "download_typst"):
        assert reverse(f"ranking:{name}", args=[finished.pk]) in html


def test_the_charts_are_svg_with_the_names_as_text(admin_client, finished):
    for name in ("heatmap", "means"):
        response = admin_client.get(reverse(f"ranking:{name}", args=[finished.pk]))
        assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
        svg = response.content.decode()
        assert svg.startswith("<?xml") and "sys&amp;&lt;b&gt;_$1" in svg


def test_downloads_in_four_formats(admin_client, finished):
    def get(name: str) -> tuple[str, str]:
        response = admin_client.get(reverse(f"ranking:{name}", args=[finished.pk]))
        assert response.status_code == 200, name
        return response.content.decode(), response["Content-Disposition"]

    text, disposition = get("download_csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert [r[5] for r in rows[1:]] == [HOSTILE, "other", "plain"]
    assert disposition == f'attachment; filename="ranking-{finished.pk}.csv"'
    latex, _ = get("download_latex")
    assert r"sys\&<b>\_\$1" in latex and latex.count("\\midrule") == 2
    typst, disposition = get("download_typst")
    assert '[#"sys&<b>_$1"]' in typst and disposition.endswith('.typ"')
    data, _ = get("download_json")
    assert json.loads(data) == finished.result


def test_a_ranking_not_done_has_no_downloads_and_its_status_polls(admin_client):
    ranking = services.start_ranking(input_kind="dataset", dataset=tiered_dataset(), enqueue=False)
    assert admin_client.get(reverse("ranking:download_csv", args=[ranking.pk])).status_code == 409
    page = admin_client.get(reverse("ranking:ranking_detail", args=[ranking.pk]))
    assert 'hx-trigger="every 1s"' in page.content.decode()
    services.run_in_foreground(ranking.pk)
    poll = admin_client.get(
        reverse("ranking:ranking_detail", args=[ranking.pk]), headers={"HX-Request": "true"}
    )
    assert poll.status_code == 286  # htmx stops polling
    assert "3 clusters" in poll.content.decode()


def test_the_form_offers_the_chosen_sources_pairs_and_scores_through_htmx(admin_client):
    rows = dataset_rows({"a": [1, 2], "b": [3, 4]}, "en-de") + dataset_rows(
        {"a": [1, 2], "b": [3, 4]}, "zh-en", comet=[{"a": 1}, {"b": 2}]
    )
    dataset = make_dataset("pairs", rows)
    page = admin_client.get(reverse("ranking:ranking_new"))
    assert page.status_code == 200 and 'hx-target="#source-fields"' in page.content.decode()
    partial = admin_client.get(
        reverse("ranking:ranking_new"),
        {"input_kind": "dataset", "dataset": dataset.pk},
        headers={"HX-Request": "true"},
    )
    html = partial.content.decode()
    assert html.startswith('\n  <div id="source-fields">') or html.lstrip().startswith(
        '<div id="source-fields">'
    )
    assert '<option value="zh-en">zh-en</option>' in html
    assert '<option value="comet">comet</option>' in html and "<form" not in html
    campaign_fields = admin_client.get(
        reverse("ranking:ranking_new"), {"input_kind": "campaign"}, headers={"HX-Request": "true"}
    ).content.decode()
    assert 'name="campaign"' in campaign_fields and 'name="dataset"' not in campaign_fields


def test_creating_from_the_form_queues_and_redirects(
    admin_client, sent_tasks, django_capture_on_commit_callbacks
):
    dataset = tiered_dataset()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("ranking:ranking_new"),
            {"input_kind": "dataset", "dataset": dataset.pk, "language_pair": "",
             "score": "human", "test": "bootstrap", "pairs": "adjacent", "n_resamples": 200,
             "alpha": 0.05, "holm": "on", "seed": 3, "name": "Bootstrapped"},
        )  # fmt: skip
    ranking = SystemRanking.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/ranking/{ranking.pk}/"
    assert (ranking.name, ranking.test, ranking.pairs, ranking.n_resamples, ranking.holm,
            ranking.seed) == ("Bootstrapped", "bootstrap", "adjacent", 200, True, 3)  # fmt: skip
    assert [task for task, _, _ in sent_tasks] == ["ranking.advance_ranking"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"n_resamples": "abc"}, "Enter a whole number."),
        ({"alpha": "NaN"}, "Enter a number."),
        ({"test": "magic"}, "Select a valid choice. magic is not one of the available choices."),
        ({"language_pair": "xx-yy"}, "Select a valid choice. xx-yy is not one of the available"),
        ({"dataset": ""}, "choose the dataset to rank"),
    ],
)
def test_bad_form_input_is_a_400_naming_the_field(admin_client, change, message):
    dataset = tiered_dataset()
    data = {"input_kind": "dataset", "dataset": dataset.pk, "score": "human",
            "test": "wilcoxon", "pairs": "all", "n_resamples": 100, "alpha": 0.05,
            "seed": 0} | change  # fmt: skip
    response = admin_client.post(reverse("ranking:ranking_new"), data)
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert list(errors) == list(change) and errors[next(iter(change))][0].startswith(message)
    assert not SystemRanking.objects.exists()


def test_outsiders_see_nothing_and_version_rankings_need_a_curator(
    annotator_client, finished, django_user_model
):
    paths = [reverse("ranking:ranking_list"), reverse("ranking:ranking_new"),
             reverse("ranking:ranking_detail", args=[finished.pk]),
             reverse("ranking:download_csv", args=[finished.pk])]  # fmt: skip
    for path in paths:
        assert annotator_client.get(path).status_code == 302, path
    client = Client()
    version = make_version(frozen_items({"a": [9, 8, 9], "b": [1, 2, 1]}))
    on_version = services.start_ranking(input_kind="version", version=version, enqueue=False)
    staff = django_user_model.objects.create_user("staff", is_staff=True)
    client.force_login(staff)
    detail = reverse("ranking:ranking_detail", args=[on_version.pk])
    assert client.get(detail).status_code == 404
    staff.groups.add(curators_group())
    assert client.get(detail).status_code == 200
    assert (
        f"/ranking/{finished.pk}/" in client.get(reverse("ranking:ranking_list")).content.decode()
    )
