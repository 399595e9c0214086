"""Campaign dashboard: rendered figures, live polling that stops, charts, permissions."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import progress
from annotation.models import Campaign
from annotation.services.campaigns import create_campaign
from annotation.services.enrollment import enroll
from tests.annotation.campaign_builders import (
    choice_answer,
    choice_campaign,
    esa_answer,
    esa_campaign,
    make_annotator,
    work,
)


def esa_with_two_annotators(name="ESA demo", overlap=2) -> Campaign:
    campaign = esa_campaign(name, overlap=overlap)
    for annotator, scores in (("alice", [90, 50, 20]), ("bob", [80, 60, 10])):
        queue = iter(scores)
        work(make_annotator(annotator), campaign, lambda item, q=queue: esa_answer(next(q)))
    return campaign


def htmx_get(client, url):
    return client.get(url, HTTP_HX_REQUEST="true")


@pytest.mark.django_db
def test_campaign_dashboard_shows_progress_annotators_and_agreement(admin_client):
    campaign = esa_with_two_annotators(overlap=3)
    carol = make_annotator("carol")
    # carol takes one item and leaves a draft: enrolled, 0 done, 1 open.
    work(carol, campaign, lambda item: None)
    response = admin_client.get(reverse("annotation:dashboard_campaign", args=[campaign.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "ann-alice" in html and "ann-bob" in html and "ann-carol" in html
    assert "Secret" not in html and "private@example.org" not in html
    context = response.context
    assert (context["progress"].submitted, context["progress"].target) == (6, 9)
    assert context["progress"].percent == 66.7
    rows = {row.pseudonym: row for row in context["annotators"]}
    assert (rows["ann-alice"].done, rows["ann-alice"].available) == (3, 3)
    assert rows["ann-alice"].qc.verdict == "pass"
    assert (rows["ann-carol"].done, rows["ann-carol"].in_progress) == (0, 1)
    assert rows["ann-alice"].time_seconds == 36.0 and rows["ann-alice"].seconds_per_item == 12.0
    scores = context["agreement"].scores
    # alice 90 50 20 vs bob 80 60 10: same ranking → tau 1.0.
    assert scores.mean_kendall_tau == 1.0
    assert scores.krippendorff_alpha is not None and scores.krippendorff_alpha > 0.9
    # Live while open: the partial polls.
    assert 'hx-trigger="every 5s"' in html
    for name in ("scores", "progress", "annotators", "annotator-scores"):
        assert reverse("annotation:dashboard_chart", args=[campaign.pk, name]) in html


@pytest.mark.django_db
def test_htmx_poll_gets_the_partial_and_stops_when_closed(admin_client):
    campaign = esa_with_two_annotators()
    url = reverse("annotation:dashboard_campaign", args=[campaign.pk])
    response = htmx_get(admin_client, url)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="live"') and "<html" not in html
    campaign.status = Campaign.Status.CLOSED
    campaign.save()
    response = htmx_get(admin_client, url)
    assert response.status_code == 286  # htmx stops polling
    assert "hx-trigger" not in response.content.decode()
    assert "figures are final" in response.content.decode()


@pytest.mark.django_db
def test_index_lists_campaigns_and_stops_polling_when_all_closed(admin_client):
    campaign = esa_with_two_annotators()
    url = reverse("annotation:dashboard")
    html = admin_client.get(url).content.decode()
    assert campaign.name in html and "6 / 6" in html
    Campaign.objects.update(status=Campaign.Status.CLOSED)
    assert htmx_get(admin_client, url).status_code == 286


@pytest.mark.django_db
def test_choice_dashboard_shows_fleiss_pabak_and_ties(admin_client):
    campaign = choice_campaign()
    picks = {"alice": [0, 0, 0, 1], "bob": [0, 1, 1, 1], "carol": [0, 0, 2, 2]}
    for name, answers in picks.items():
        queue = iter(answers)
        work(make_annotator(name), campaign, lambda item, q=queue: choice_answer(next(q)))
    response = admin_client.get(reverse("annotation:dashboard_campaign", args=[campaign.pk]))
    summary = response.context["agreement"]
    # 1 of 4 items unanimous; q = 3 options → PABAK = (3·0.25 − 1)/2 = −0.125.
    assert summary.choices.total_agreement == 0.25
    assert summary.choices.pabak == -0.125
    assert (summary.majority_items, summary.tied_items, summary.pending_items) == (3, 1, 0)
    assert summary.tied[0]["answers"] == ["yes", "no", "maybe"]
    html = response.content.decode()
    assert "Fleiss" in html and "PABAK" in html and "Items without a majority (1)" in html


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["scores", "progress", "annotators", "annotator-scores"])
def test_charts_are_svg_drawn_from_the_data(admin_client, name):
    campaign = esa_with_two_annotators()
    response = admin_client.get(reverse("annotation:dashboard_chart", args=[campaign.pk, name]))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert response.content.startswith(b"<?xml") and b"<svg" in response.content
    assert b"no submitted" not in response.content and b"nothing submitted" not in response.content


@pytest.mark.django_db
def test_score_bins_and_annotator_stats_by_hand():
    campaign = esa_with_two_annotators()
    # Per-item means over annotators who pass QC: (90+80)/2, (50+60)/2, (20+10)/2 = 85, 55, 15.
    assert progress.score_bins(campaign) == [0, 1, 0, 0, 0, 1, 0, 0, 1, 0]
    stats = progress.annotator_score_stats(campaign)
    assert stats[0][0] == "ann-alice" and stats[0][1] == pytest.approx(160 / 3, abs=1e-3)
    # alice: mean 53.333, population std sqrt(((90−53.3)² + (50−53.3)² + (20−53.3)²)/3) = 28.674
    assert stats[0][2] == pytest.approx(28.674, abs=1e-3) and stats[0][3] == 3


@pytest.mark.django_db
def test_dashboard_queries_do_not_grow_with_items(admin_client):
    small = esa_with_two_annotators("small")
    url_small = reverse("annotation:dashboard_campaign", args=[small.pk])

    items = [
        {"doc_id": "d", "seg_id": str(n), "source": f"s{n}", "target": f"t{n}"} for n in range(12)
    ]
    big = create_campaign("big", "esa", items, overlap=2)
    for annotator in ("alice", "bob"):
        work(make_annotator(annotator), big, lambda item: esa_answer(70))
    url_big = reverse("annotation:dashboard_campaign", args=[big.pk])
    counts = []
    for url in (url_small, url_big):
        with CaptureQueriesContext(connection) as ctx:
            assert admin_client.get(url).status_code == 200
        counts.append(len(ctx.captured_queries))
    assert counts[0] == counts[1]


@pytest.mark.django_db
def test_dashboard_is_404_for_non_staff(client, annotator_user, outsider_user):
    campaign = esa_with_two_annotators()
    alice = (
        campaign.enrollments.select_related("annotator__user")
        .get(annotator__pseudonym="ann-alice")
        .annotator.user
    )
    urls = [
        reverse("annotation:dashboard"),
        reverse("annotation:dashboard_campaign", args=[campaign.pk]),
        reverse("annotation:dashboard_chart", args=[campaign.pk, "scores"]),
    ]
    for user in (alice, annotator_user, outsider_user):
        client.force_login(user)
        for url in urls:
            assert client.get(url).status_code == 404, (user, url)
    client.logout()
    assert all(client.get(url).status_code == 302 for url in urls)


@pytest.mark.django_db
def test_unknown_chart_and_campaign_are_404(admin_client):
    campaign = esa_with_two_annotators()
    assert (
        admin_client.get(
            reverse("annotation:dashboard_chart", args=[campaign.pk, "nope"])
        ).status_code
        == 404
    )
    assert (
        admin_client.get(reverse("annotation:dashboard_campaign", args=[99999])).status_code == 404
    )


@pytest.mark.django_db
def test_unchanged_campaign_polls_reuse_cached_qc_and_agreement(admin_client):
    campaign = esa_with_two_annotators()
    url = reverse("annotation:dashboard_campaign", args=[campaign.pk])
    counts = []
    for _ in range(2):
        with CaptureQueriesContext(connection) as ctx:
            assert htmx_get(admin_client, url).status_code == 200
        counts.append(len(ctx.captured_queries))
    assert counts[1] < counts[0]
    # A new submission changes the version: figures are recomputed, not served stale.
    work(make_annotator("carol"), campaign, lambda item: None)
    enroll(make_annotator("dave"), campaign)
    html = htmx_get(admin_client, url).content.decode()
    assert "ann-dave" in html and ">pending</span>" in html  # dave has no submission yet
