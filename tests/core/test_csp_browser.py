"""The Content Security Policy in a real browser: key pages load with no violation reported and
htmx still polls and swaps (ADR 0017).

A violation is caught twice over: the page's ``securitypolicyviolation`` events (recorded by an
init script, which the policy does not govern) and Chromium's console error for it.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.services.campaigns import create_campaign
from search.breaker.services import run_in_foreground, start_breaker_run
from search.runs.services import start_search_run
from tests.annotation.factories import enrolled
from tests.challenge_sets.conftest import make_set
from tests.engines.factories import SyntheticEngineFactory
from tests.factories import UserFactory
from tests.search.breaker_helpers import offline_config
from tests.search.conftest import synthetic_run_config

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RECORD_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  const where = `${event.sourceFile}:${event.lineNumber}`;
  window.cspViolations.push(`${event.violatedDirective} ${event.blockedURI} ${where}`);
});
"""


class Watched:
    """A logged-in page that fails the test on any CSP violation or script error."""

    def __init__(self, chromium, live_server, username: str):
        self.base = live_server.url
        self.context = chromium.new_context()
        self.context.add_init_script(RECORD_VIOLATIONS)
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("pageerror", lambda exc: self.problems.append(f"script error: {exc}"))
        self.page.on("console", self._console)
        self.page.goto(f"{self.base}/accounts/login/")
        self.page.fill("input[name=username]", username)
        self.page.fill("input[name=password]", "correct horse battery")
        with self.page.expect_navigation():
            self.page.click("button[type=submit]")

    def _console(self, message) -> None:
        if "Content Security Policy" in message.text:
            self.problems.append(f"console: {message.text}")

    def open(self, path: str) -> None:
        """Go to ``path`` (following redirects); the page must be served with the policy."""
        response = self.page.goto(f"{self.base}{path}")
        assert response is not None and response.status == 200, path
        assert "script-src 'self'" in response.headers["content-security-policy"]

    def assert_clean(self) -> None:
        violations = self.page.evaluate("window.cspViolations")
        assert (violations, self.problems) == ([], [])


def htmx_request(response) -> bool:
    return response.request.headers.get("hx-request") == "true" and response.ok


def test_annotate_page_and_its_keyboard_span_editor_run_under_the_policy(
    browser,
    live_server,
):
    campaign = create_campaign(
        "CSP ESA", "esa",
        [{"doc_id": "d", "seg_id": 1, "source": "The council approved the budget.",
          "target": "Der Rat hat den Haushalt genehmigt."}],
        qc_min_seconds_per_item=0,
    )  # fmt: skip
    enrolled(campaign, "rater")
    watched = Watched(browser, live_server, "rater")

    watched.open(f"/annotation/campaigns/{campaign.pk}/next/")  # redirects to the item
    watched.page.wait_for_selector("#target .g")
    watched.page.keyboard.press("t")
    watched.page.keyboard.press("Enter")  # marks the word at the cursor

    assert watched.page.inner_text("#span-list").startswith("Der")
    watched.assert_clean()
    # The ESA anchors are placed by hardset.js, not by a style attribute.
    assert watched.page.locator(".anchors span").last.evaluate("el => el.style.left") == "100%"


def test_staff_pages_run_under_the_policy_and_htmx_still_polls_and_swaps(
    browser,
    live_server,
):
    UserFactory(username="boss", is_staff=True, is_superuser=True)
    campaign = create_campaign(
        "CSP dashboard", "esa", [{"doc_id": "d", "seg_id": 1, "source": "a", "target": "b"}]
    )
    SyntheticEngineFactory(name="world", params={"n_topics": 200, "seed": 1})
    search_run = start_search_run(synthetic_run_config(), enqueue=False)  # queued: it polls
    breaker_run = run_in_foreground(start_breaker_run(offline_config(n_steps=2), enqueue=False).pk)
    challenge_set = make_set()
    watched = Watched(browser, live_server, "boss")

    watched.open(reverse("annotation:dashboard_campaign", args=[campaign.pk]))
    with watched.page.expect_response(htmx_request):
        pass  # the live section polls (hx-trigger="every 5s")

    watched.open(reverse("search:run_detail", args=[search_run.pk]))
    with watched.page.expect_response(lambda r: htmx_request(r) and "seen=" in r.url):
        pass  # the run's status polls while the run is not finished

    watched.open(reverse("search:breaker_detail", args=[breaker_run.pk]))
    watched.page.wait_for_selector("figure.run-chart img")

    queued = start_breaker_run(offline_config(n_steps=2, name="Queued"), enqueue=False)
    watched.open(reverse("search:breaker_detail", args=[queued.pk]))
    questions: list[str] = []

    def answer(dialog) -> None:
        questions.append(dialog.message)
        dialog.dismiss()

    watched.page.once("dialog", answer)
    watched.page.click("form[data-confirm] button")  # hardset.js asks first; "no" keeps it
    assert questions == ["Cancel this run for good?"]
    queued.refresh_from_db()
    assert queued.status == "queued"

    watched.open(reverse("challenge_sets:set_detail", args=[challenge_set.pk]))
    with watched.page.expect_response(lambda r: htmx_request(r) and "sort=" in r.url):
        watched.page.locator("#item-table thead a").first.click()  # an htmx swap of the table
    # htmx pushes the URL once the swap has settled, after the response arrives
    watched.page.wait_for_url(lambda url: "sort=" in url)  # hx-push-url
    watched.page.check("#item-table input[data-select-all]")  # bound by hardset.js
    boxes = watched.page.locator("#item-table input[name=items]")
    assert boxes.count() == 3
    assert all(boxes.nth(i).is_checked() for i in range(3))

    watched.open("/api/docs/")
    watched.page.wait_for_selector(".swagger-ui .info .title")
    watched.open(f"/api/search-runs/{search_run.pk}/")  # DRF's browsable API, with its actions
    watched.page.wait_for_selector("#extra-actions-menu")

    watched.assert_clean()
