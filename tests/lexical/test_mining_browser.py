"""The mining job page in headless Chromium: served under the CSP with no violation, the
running job's status polls and swaps, the finished one lists its concepts (screenshot in var/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from lexical.mining.services import run_in_foreground, start_mining
from lexical.models import MiningJob
from tests.core.test_csp_browser import Watched, htmx_request
from tests.factories import UserFactory
from tests.lexical.mining_support import synthetic_corpus, tiny_corpus

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_job_page_polls_then_shows_the_concepts(browser, live_server):
    UserFactory(username="boss", is_staff=True, is_superuser=True)
    running = start_mining(tiny_corpus(), enqueue=False)
    finished = run_in_foreground(
        start_mining(synthetic_corpus(), {"max_examples": 3}, enqueue=False).pk
    )
    watched = Watched(browser, live_server, "boss")
    with watched.page.expect_response(htmx_request, timeout=10_000):
        watched.open(f"/lexical/mining/{running.pk}/")
    MiningJob.objects.filter(pk=running.pk).update(items_done=3)
    watched.page.wait_for_selector("text=3 / 6", timeout=10_000)
    watched.open(f"/lexical/mining/{finished.pk}/")
    assert watched.page.locator("text=Concepts (4)").count() == 1
    assert watched.page.locator("a[href^='/lexical/concepts/']").count() == 4
    shots = Path(settings.VAR_DIR) / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    watched.page.screenshot(path=str(shots / "lexical_mining_job.png"), full_page=True)
    watched.open(f"/lexical/mining/new?corpus={finished.corpus_id}")
    watched.assert_clean()
