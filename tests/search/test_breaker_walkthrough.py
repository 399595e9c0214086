"""What an admin met comparing methods end to end (issue 13 walk-through): the comparison page
has a plain title, updates itself while its runs go on and reloads once they are over, and the
campaigns sent from it are named and described in words, not codes."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Campaign
from search.breaker.charts import diversity_difficulty_svg
from search.breaker.services import run_in_foreground, start_breaker_comparison
from search.models import BreakerRun
from tests.search.breaker_helpers import SEED_TEXTS, offline_config

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def comparison(**overrides):
    config = {**offline_config(n_steps=2), "methods": ["seeds", "breaker_seeded"], **overrides}
    return start_breaker_comparison(config, enqueue=False)


def page_url(name: str) -> str:
    return reverse("search:breaker_comparison") + f"?name={name}"


def test_the_comparison_page_title_is_only_its_name(admin_client):
    runs = comparison(name="Title check")
    html = admin_client.get(page_url(runs[0].comparison)).content.decode()
    title = re.search(r"<title>(.*?)</title>", html, re.S).group(1)
    assert title.startswith(f"Comparison {runs[0].comparison}")
    assert "<" not in title and "Data quality" not in title


def test_the_progress_table_polls_while_runs_go_on_and_the_page_reloads_once_all_ended(
    admin_client,
):
    runs = comparison(name="Live")
    name = runs[0].comparison
    html = admin_client.get(page_url(name)).content.decode()
    table = re.search(r'<div id="comparison-progress"[^>]*>', html).group(0)
    assert 'hx-trigger="every 2s"' in table
    run_in_foreground(runs[0].pk)
    polled = admin_client.get(page_url(name), **HTMX)
    body = polled.content.decode()
    assert polled.status_code == 200 and "HX-Refresh" not in polled
    assert body.lstrip().startswith('<div id="comparison-progress"') and "<html" not in body
    assert "finished" in body and "queued" in body
    # Fig. 2 is redrawn as steps are scored: its address carries the steps done so far.
    chart = reverse("search:breaker_comparison_chart")
    assert f"{chart}?name=Live&amp;steps={runs[0].steps_total}" in body
    assert 'width="900" height="340"' in body  # the swap keeps its place while it reloads
    run_in_foreground(runs[1].pk)
    ended = admin_client.get(page_url(name), **HTMX)
    assert ended["HX-Refresh"] == "true"
    html = admin_client.get(page_url(name)).content.decode()
    table = re.search(r'<div id="comparison-progress"[^>]*>', html).group(0)
    assert "hx-trigger" not in table


def _report_texts(html: str) -> dict[int, str]:
    """The Texts cell of the People section's report, by run (one translator per run here)."""
    table = re.search(r'<table class="human-report">(.*?)</table>', html, re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in rows]
    return {int(re.search(r"#(\d+)", c[0]).group(1)): c[2] for c in cells}


def test_the_people_report_follows_the_runs_without_a_reload(admin_client):
    runs = comparison(name="Counts")
    name = runs[0].comparison
    first, second = runs
    assert _report_texts(admin_client.get(page_url(name)).content.decode()) == {
        first.pk: "0", second.pk: "0"}  # fmt: skip
    run_in_foreground(runs[0].pk)
    polled = admin_client.get(page_url(name), **HTMX).content.decode()
    # The People section comes with the progress table, swapped in out of band.
    assert '<section id="humans" class="humans" hx-swap-oob="true">' in polled
    assert _report_texts(polled) == {first.pk: str(first.chains.count()), second.pk: "0"}
    # A run's own page: its results reload when the run moved, the People section with them.
    page = admin_client.get(reverse("search:breaker_detail", args=[second.pk])).content.decode()
    assert _report_texts(page) == {second.pk: "0"} and "Send to annotation" not in page
    run_in_foreground(second.pk)
    url = reverse("search:breaker_results", args=[second.pk])
    results = admin_client.get(url, **HTMX).content.decode()
    assert 'hx-swap-oob="true"' in results and "Send to annotation" in results
    assert _report_texts(results) == {second.pk: str(second.chains.count())}


def test_a_sent_comparison_campaign_is_named_and_listed_in_words(admin_client):
    runs = [run_in_foreground(r.pk) for r in comparison(name="Words")]
    name = runs[0].comparison
    url = reverse("search:breaker_comparison_send") + f"?name={name}"
    response = admin_client.post(url, {"protocol": "esa_mqm", "overlap": "1"}, follow=True)
    campaign = Campaign.objects.get()
    assert campaign.name == f"MT-breaker comparison “{name}”: ESA+MQM"
    html = response.content.decode()
    assert "share its sign-up link" in html and "item(s)" not in html
    row = re.search(r"<h3>Campaigns</h3>.*?</table>", html, re.S).group(0)
    assert "Scoring" in row and "ESA+MQM hybrid" in row
    assert ">score<" not in row and ">esa_mqm<" not in row


def test_the_api_gives_each_runs_mean_selected_quality_in_the_list_and_the_detail(admin_client):
    runs = comparison(name="Api mean")
    run_in_foreground(runs[1].pk)
    detail = admin_client.get(f"/api/breaker-runs/{runs[1].pk}/").json()
    chains = admin_client.get(f"/api/breaker-runs/{runs[1].pk}/chains/").json()["results"]
    selected = [c["quality"] for c in chains]  # rounded to 0.01 in the chain records
    assert detail["mean_selected_quality"] == pytest.approx(sum(selected) / len(selected), abs=0.01)
    queued = admin_client.get(f"/api/breaker-runs/{runs[0].pk}/").json()
    assert queued["mean_selected_quality"] is None
    listed = {r["id"]: r for r in admin_client.get("/api/breaker-runs/").json()["results"]}
    assert listed[runs[1].pk]["mean_selected_quality"] == pytest.approx(
        detail["mean_selected_quality"]
    )
    assert listed[runs[0].pk]["mean_selected_quality"] is None


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/api/breaker-runs/{run}/statistics/", {"embedder": "nope", "analyst": "x"}, "embedder"),
        ("/api/breaker-runs/{run}/statistics/", {"embedder": 3}, "embedder"),
        (
            "/api/breaker-transfers/",
            {"runs": ["{run}"], "translators": [], "qe": []},
            "translators",
        ),
        ("/api/breaker-runs/{run}/send-to-annotation/", {"protocol": "choice"}, "protocol"),
    ],
)
def test_refused_statistics_transfers_and_sends_have_a_detail_line_like_every_api_error(
    admin_client, url, body, field
):
    run = run_in_foreground(comparison(name="Refused")[0].pk)
    body = {k: [run.pk] if v == ["{run}"] else v for k, v in body.items()}
    response = admin_client.post(url.format(run=run.pk), body, content_type="application/json")
    assert response.status_code == 400
    data = response.json()
    assert field in data["errors"] and f"{field}: {data['errors'][field]}" in data["detail"]


def test_fig3_names_each_method_once_in_a_legend_so_close_points_do_not_overprint():
    points = [("Zeroshot", 0.5, 0.62, 94.3), ("Zeroshot (history)", 0.5, 0.62, 94.3),
              ("MT-breaker (seeded)", 0.74, 0.74, 56.1)]  # fmt: skip
    svg = diversity_difficulty_svg(points).decode()
    for label, *_ in points:
        assert svg.count(f"{label}</text>") == 1  # the legend's entry, not one per panel


def test_a_second_comparison_under_a_taken_name_is_refused_naming_the_field(admin_client):
    first = comparison(name="Twice")
    response = admin_client.post(
        "/api/breaker-runs/",
        {**offline_config(n_steps=2), "name": "Twice", "methods": ["seeds"]},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "already exists" in response.json()["errors"]["name"]
    assert BreakerRun.objects.filter(comparison="Twice").count() == len(first)
    upload = "\n".join(json.dumps({"text": t}) for t in SEED_TEXTS).encode()
    page = admin_client.post(
        reverse("search:breaker_create"),
        {
            "name": "Twice", "methods": ["seeds"], "targets": ["sim-fragile-mt"],
            "qe": ["sim-qe"], "src_lang": "en", "tgt_lang": "cs", "seed_source": "jsonl",
            "jsonl": SimpleUploadedFile("seeds.jsonl", upload), "n": 2, "sample_seed": 1,
            "n_steps": 2, "k_generations": 2, "max_edit_share": 60, "seed": 0,
        },
    )  # fmt: skip
    html = page.content.decode()
    assert page.status_code == 400 and "a comparison named &#x27;Twice&#x27; already exists" in html
    assert BreakerRun.objects.filter(comparison="Twice").count() == len(first)


def test_a_chain_page_leads_back_to_its_comparison(admin_client):
    run = run_in_foreground(comparison(name="Back & forth")[1].pk)
    html = admin_client.get(reverse("search:breaker_chain", args=[run.pk, 0])).content.decode()
    crumbs = re.search(r'<nav aria-label="breadcrumb">.*?</nav>', html, re.S).group(0)
    assert f'href="{page_url("Back%20%26%20forth")}"' in crumbs and ">Back &amp; forth<" in crumbs


def test_saving_samples_says_which_topic_tree_holds_them(admin_client):
    run = run_in_foreground(comparison(name="Samples")[1].pk)
    url = reverse("search:breaker_samples", args=[run.pk])
    html = admin_client.post(url, follow=True).content.decode()
    saved = f"{len(SEED_TEXTS)} selected texts are text samples of the topic tree “MT-breaker #"
    assert f"{saved}{run.pk}: {run.name}”" in html
    assert "text(s)" not in html


def test_a_run_page_says_where_its_seeds_came_from_in_words(admin_client):
    run = comparison(name="Seeds from")[0]
    html = admin_client.get(reverse("search:breaker_detail", args=[run.pk])).content.decode()
    assert "· seeds: An uploaded JSONL file" in html and "seeds from jsonl" not in html
