"""Breaker statistics through the interfaces: the run page section and its form, the Table 2
comparison with the Fig. 3 chart, the API action and the command; staff only."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from search.breaker.data_quality import COMPUTE_TASK, start_statistics, statistics_in_foreground
from search.breaker.demo import EDITOR, EMBEDDINGS
from search.breaker.services import run_in_foreground, start_breaker_comparison
from search.models import BreakerStatistics
from tests.search.breaker_helpers import offline_config

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs(db):
    config = offline_config(n_steps=2, methods=["seeds", "breaker_seeded"], name="Cmp")
    del config["method"]
    return [run_in_foreground(run.pk) for run in start_breaker_comparison(config, enqueue=False)]


def _compute(run):
    stats = start_statistics(run, embedder=EMBEDDINGS, analyst=EDITOR, enqueue=False)
    return statistics_in_foreground(stats.pk)


def test_outsiders_see_nothing_and_change_nothing(client, outsider_user, runs):
    client.force_login(outsider_user)
    url = reverse("search:breaker_statistics", args=[runs[0].pk])
    assert client.get(url).status_code in (302, 404)
    posted = client.post(url, {"embedder": EMBEDDINGS, "analyst": EDITOR})
    assert posted.status_code in (302, 404)
    api = f"/api/breaker-runs/{runs[0].pk}/statistics/"
    assert client.post(api, {"embedder": EMBEDDINGS, "analyst": EDITOR}).status_code == 403
    assert client.get(api).status_code == 403
    tradeoff = reverse("search:breaker_comparison_tradeoff") + "?name=Cmp"
    assert client.get(tradeoff).status_code in (302, 404)
    assert not BreakerStatistics.objects.exists()


def test_the_run_page_offers_the_form_and_starting_queues_the_job(
    admin_client, runs, sent_tasks, django_capture_on_commit_callbacks
):
    run = runs[1]
    page = admin_client.get(reverse("search:breaker_detail", args=[run.pk])).content.decode()
    assert "Data quality" in page and "Not computed yet." in page and "Compute statistics" in page
    assert f'<option value="{EMBEDDINGS}"' in page

    url = reverse("search:breaker_statistics", args=[run.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, {"embedder": EMBEDDINGS, "analyst": EDITOR})

    assert response.status_code == 302
    stats = BreakerStatistics.objects.get(run=run)
    assert sent_tasks == [(COMPUTE_TASK, (stats.pk, 1), {"queue": "slow", "countdown": None})]
    polled = admin_client.get(url)
    assert polled.status_code == 200 and 'hx-trigger="every 2s"' in polled.content.decode()


def test_a_bad_choice_starts_nothing_and_says_which_field(admin_client, runs):
    url = reverse("search:breaker_statistics", args=[runs[0].pk])

    response = admin_client.post(url, {"embedder": EDITOR, "analyst": EDITOR}, follow=True)

    assert "Nothing started: embedder:" in response.content.decode()
    assert not BreakerStatistics.objects.exists()


def test_the_run_page_shows_the_computed_statistics(admin_client, runs):
    stats = _compute(runs[1])
    html = admin_client.get(reverse("search:breaker_detail", args=[runs[1].pk])).content.decode()

    assert "Diversity (embd)" in html and "Syntax complexity" in html and "QE (sim-qe)" in html
    assert f"{stats.values['diversity_chrf']:.2f}" in html
    assert stats.chrf_signature in html and "hashed character n-grams" in html
    polled = admin_client.get(reverse("search:breaker_statistics", args=[runs[1].pk]))
    assert polled.status_code == 286  # htmx: stop polling, they are done


def test_the_comparison_shows_table_2_side_by_side_and_fig_3(admin_client, runs):
    _compute(runs[0])
    url = reverse("search:breaker_comparison") + "?name=Cmp"

    html = admin_client.get(url).content.decode()

    assert "Table 2" in html and "1 of 2 runs have no finished statistics yet" in html
    assert "MT-breaker (seeded)</th>" in html and "Seeds</th>" in html
    chart = admin_client.get(reverse("search:breaker_comparison_tradeoff") + "?name=Cmp")
    assert chart["Content-Type"] == "image/svg+xml" and b"Seeds" in chart.content


def test_the_comparison_computes_table_2_for_all_runs_and_follows_them(
    admin_client, runs, sent_tasks, django_capture_on_commit_callbacks
):
    page = admin_client.get(reverse("search:breaker_comparison") + "?name=Cmp").content.decode()
    assert "Compute Table 2 for all runs" in page and f'<option value="{EMBEDDINGS}"' in page
    url = reverse("search:breaker_comparison_statistics") + "?name=Cmp"
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, {"embedder": EMBEDDINGS, "analyst": EDITOR})
    assert response.status_code == 302 and response["Location"].endswith("#data-quality")
    stats = list(BreakerStatistics.objects.order_by("run_id"))
    assert [s.run_id for s in stats] == sorted(r.pk for r in runs)
    assert {(s.embedder.name, s.analyst.name) for s in stats} == {(EMBEDDINGS, EDITOR)}
    assert sorted(t[1] for t in sent_tasks) == sorted((s.pk, 1) for s in stats)
    polled = admin_client.get(url)
    html = polled.content.decode()
    assert polled.status_code == 200 and 'hx-trigger="every 2s"' in html
    assert "Computing the statistics of 2 runs" in html and "Compute Table 2" not in html
    for s in stats:
        statistics_in_foreground(s.pk)
    done = admin_client.get(url)
    assert done.status_code == 286  # htmx: stop polling, every column is computed
    assert "no finished statistics" not in done.content.decode()
    assert "Compute Table 2 for all runs" in done.content.decode()


def test_table_2_for_all_runs_skips_a_run_being_computed_and_refuses_bad_engines(
    admin_client, runs
):
    busy = start_statistics(runs[0], embedder=EMBEDDINGS, analyst=EDITOR, enqueue=False)
    url = reverse("search:breaker_comparison_statistics") + "?name=Cmp"
    refused = admin_client.post(url, {"embedder": EDITOR, "analyst": EDITOR}, follow=True)
    assert "Nothing started: embedder:" in refused.content.decode()
    assert BreakerStatistics.objects.count() == 1
    response = admin_client.post(url, {"embedder": EMBEDDINGS, "analyst": EDITOR}, follow=True)
    html = response.content.decode()
    assert "statistics of 1 run(s) are queued" in html
    assert f"Not Seeds (#{runs[0].pk}): the statistics of this run are being computed." in html
    assert BreakerStatistics.objects.get(pk=busy.pk).round_index == busy.round_index
    assert BreakerStatistics.objects.filter(run=runs[1]).exists()


def test_api_statistics_action(admin_client, runs, sent_tasks):
    url = f"/api/breaker-runs/{runs[0].pk}/statistics/"
    assert admin_client.get(url).status_code == 404

    bad = admin_client.post(
        url, {"embedder": 3, "analyst": EDITOR}, content_type="application/json"
    )
    assert bad.status_code == 400 and bad.json() == {
        "detail": "embedder: must be an engine name (a string)",
        "errors": {"embedder": "must be an engine name (a string)"},
    }
    missing = admin_client.post(url, {"analyst": EDITOR}, content_type="application/json")
    assert missing.json() == {
        "detail": "embedder: required: the name of an engine",
        "errors": {"embedder": "required: the name of an engine"},
    }
    assert not BreakerStatistics.objects.exists()

    started = admin_client.post(
        url, {"embedder": EMBEDDINGS, "analyst": EDITOR}, content_type="application/json"
    )
    assert started.status_code == 202 and started.json()["status"] == "queued"
    again = admin_client.post(
        url, {"embedder": EMBEDDINGS, "analyst": EDITOR}, content_type="application/json"
    )
    assert again.status_code == 409 and "being computed" in again.json()["detail"]

    statistics_in_foreground(BreakerStatistics.objects.get().pk)
    done = admin_client.get(url).json()
    assert done["status"] == "done" and done["embedder"] == EMBEDDINGS
    assert done["values"]["texts"] == 6 and len(done["texts"]) == 6


def test_the_command_computes_in_the_foreground(runs):
    out = StringIO()
    call_command(
        "compute_breaker_statistics", str(runs[1].pk), "--embedder", EMBEDDINGS,
        "--analyst", EDITOR, "--foreground", "--json", stdout=out,
    )  # fmt: skip
    result = json.loads(out.getvalue())
    assert result["status"] == "done" and result["values"]["analysed"] == 6
    assert result["chrf_signature"].startswith("#:1|c:mixed|e:yes|nc:6|nw:2")

    text = StringIO()
    call_command("compute_breaker_statistics", str(runs[1].pk), "--embedder", EMBEDDINGS,
                 "--analyst", EDITOR, "--foreground", stdout=text)  # fmt: skip
    assert text.getvalue().startswith(f"run {runs[1].pk}: 6 texts, diversity embd ")

    with pytest.raises(CommandError, match="refused: analyst: there is no engine named 'x'"):
        call_command("compute_breaker_statistics", str(runs[1].pk), "--embedder", EMBEDDINGS,
                     "--analyst", "x")  # fmt: skip
