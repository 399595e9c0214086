"""The comparison page in a real browser: its progress table polls while the runs go on, and the
page reloads by itself once every run has ended, so "Send to annotation" appears unasked."""

from __future__ import annotations

import pytest
from django.urls import reverse

from search.breaker.services import run_in_foreground, start_breaker_comparison
from tests.core.test_csp_browser import Watched, htmx_request
from tests.factories import UserFactory
from tests.search.breaker_helpers import offline_config

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_comparison_page_follows_its_runs_and_reloads_when_all_ended(
    browser,
    live_server,
):
    UserFactory(username="boss", is_staff=True, is_superuser=True)
    config = {**offline_config(n_steps=2), "name": "Live", "methods": ["seeds", "breaker_seeded"]}
    runs = start_breaker_comparison(config, enqueue=False)
    watched = Watched(browser, live_server, "boss")
    page = watched.page

    watched.open(reverse("search:breaker_comparison") + "?name=Live")
    assert page.title() == "Comparison Live · Hardset"
    assert page.locator("#humans form.send-form").count() == 0  # not before the runs end
    with page.expect_response(lambda r: htmx_request(r) and "comparison/?name=Live" in r.url):
        pass  # the progress table polls while a run is not finished

    for run in runs:  # between browser steps: the ORM and Playwright never run at once
        run_in_foreground(run.pk)
    page.wait_for_selector("#humans form.send-form")  # HX-Refresh reloaded the whole page
    assert page.locator("#comparison-progress[hx-trigger]").count() == 0
    rows = page.locator("#comparison-progress tbody tr")
    assert rows.filter(has_text="finished").count() == rows.count() == len(runs)
    watched.assert_clean()
