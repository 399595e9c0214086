"""The journey in a real browser: a finished DEC evaluation's page lists its estimators in its
discrimination section, "measure" opens the form preset to that estimator, the analysis page
polls while the job runs and, once it is done, shows its headline and draws its curves."""

from __future__ import annotations

import pytest
from django.urls import reverse

from difficulty.services import run_difficulty_evaluation, start_difficulty_evaluation
from ranking.subsets import services
from ranking.subsets.models import DiscriminationAnalysis
from tests.core.test_csp_browser import Watched
from tests.factories import UserFactory
from tests.ranking.support import tiered_dataset

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_from_a_dec_evaluation_to_the_curves_of_its_hardest_segments(browser, live_server):
    UserFactory(username="boss", is_staff=True, is_superuser=True)
    evaluation = start_difficulty_evaluation(tiered_dataset(), ["length"], n_bootstrap=0,
                                             enqueue=False)  # fmt: skip
    evaluation = run_difficulty_evaluation(evaluation.pk)
    watched = Watched(browser, live_server, "boss")
    page = watched.page

    watched.open(reverse("difficulty:evaluation_detail", args=[evaluation.pk]))
    row = page.locator(".discrimination-estimators tr", has_text="human-score oracle")
    row.get_by_role("link", name="measure").click()
    page.wait_for_selector("form.ranking-form")
    assert page.locator("select[name=estimator]").input_value() == "oracle"
    page.fill("input[name=fractions]", "10 25 50")
    page.fill("input[name=n_random]", "3")
    page.fill("input[name=n_resamples]", "99")
    with page.expect_navigation():
        page.get_by_role("button", name="Measure").click()
    assert page.locator("#discrimination-status[hx-trigger]").count() == 1  # queued: it polls

    analysis = DiscriminationAnalysis.objects.get()  # between browser steps, never at once
    services.run_in_foreground(analysis.pk)
    page.wait_for_selector("#discrimination-status .discrimination-headline")
    chart = page.locator("#discrimination-status figure img")
    chart.scroll_into_view_if_needed()
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=chart.element_handle()
    )
    assert "separates systems:" in page.inner_text(".discrimination-headline")
    assert page.locator("#discrimination-status[hx-trigger]").count() == 0
    watched.assert_clean()
