"""The ranking journey in headless Chromium: choose a dataset in the form (htmx fills in its
language pairs), start a ranking, watch the page poll until it is done, then see the clusters as
rules, the heat map and the means plot (screenshots in var/screenshots/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from ranking import services
from ranking.models import SystemRanking
from tests.core.test_csp_browser import Watched
from tests.factories import UserFactory
from tests.ranking.support import dataset_rows, make_dataset, tiered_scores

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_create_a_ranking_from_a_dataset_and_see_its_clusters(browser, live_server, sent_tasks):
    UserFactory(username="boss", is_staff=True, is_superuser=True)
    rows = dataset_rows(tiered_scores(seed=4), "en-de") + dataset_rows(tiered_scores(), "en-cs")
    dataset = make_dataset("WMT-like tiers", rows)
    watched = Watched(browser, live_server, "boss")
    page = watched.page
    shots = Path(settings.VAR_DIR) / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)

    watched.open("/ranking/new/")
    with page.expect_response(lambda r: "dataset=" in r.url and r.ok):
        page.select_option("select[name=dataset]", str(dataset.pk))
    page.wait_for_selector("select[name=language_pair] option[value=en-cs]", state="attached")
    page.select_option("select[name=language_pair]", "en-cs")
    page.select_option("select[name=test]", "permutation")
    page.fill("input[name=n_resamples]", "500")
    page.screenshot(path=str(shots / "ranking_new.png"), full_page=True)
    with page.expect_navigation():
        page.click("button:has-text('Rank the systems')")
    ranking = SystemRanking.objects.get()
    assert page.url.endswith(f"/ranking/{ranking.pk}/")
    assert [task for task, _, _ in sent_tasks] == ["ranking.advance_ranking"]
    page.wait_for_selector("text=waiting for a worker")

    services.run_in_foreground(ranking.pk)  # what the worker would do; the page polls for it
    page.wait_for_selector(".ranking-table", timeout=10_000)
    assert page.locator(".ranking-table tbody tr").count() == 6
    assert page.locator(".ranking-table tr.cluster-end").count() == 2
    assert page.locator("text=3 clusters").count() == 1
    images = page.locator(".ranking-charts img")
    images.first.scroll_into_view_if_needed()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.ranking-charts img')].every(i => i.complete)"
    )
    widths = images.evaluate_all("(imgs) => imgs.map((img) => img.naturalWidth)")
    assert len(widths) == 2 and all(width > 200 for width in widths), widths
    page.screenshot(path=str(shots / "ranking_detail.png"), full_page=True)
    watched.assert_clean()
