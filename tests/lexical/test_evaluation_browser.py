"""The evaluation page in headless Chromium: the results, the charts and the htmx status."""

from __future__ import annotations

import pytest

from lexical.evaluation.services import run_in_foreground, start_lexical_evaluation
from tests.engines.conftest import fake_openai  # noqa: F401  (fixture)
from tests.factories import UserFactory
from tests.lexical.eval_helpers import make_engines, make_selection, scripted

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_evaluation_page_draws_its_charts(browser, live_server, fake_openai, tmp_path):  # noqa: F811
    fake_openai.responder = scripted
    make_engines(fake_openai.base_url, "oracle", "contrarian", "mt")
    selection = make_selection()
    evaluation = start_lexical_evaluation(
        {"selection": selection.pk, "entries": ["oracle:none", "contrarian:none", "mt:translate"],
         "runs": 3, "seed": 1},
        enqueue=False,
    )  # fmt: skip
    run_in_foreground(evaluation.pk)
    UserFactory(username="staff", is_staff=True)

    page = browser.new_page(viewport={"width": 1280, "height": 1800})
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "staff")
    page.fill("input[name=password]", "correct horse battery")
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.goto(f"{live_server.url}/lexical/evaluation/{evaluation.pk}/")
    page.wait_for_load_state("networkidle")
    assert page.locator(".evaluation-summary tbody tr").count() == 4  # 3 entries + baseline
    images = page.locator("#evaluation-results img")
    assert images.count() == 3  # Fig. 2 and the position-bias charts for 2 and 3 options
    widths = images.evaluate_all("(imgs) => imgs.map((img) => img.naturalWidth)")
    assert all(width > 100 for width in widths), widths
    page.screenshot(path=str(tmp_path / "evaluation.png"), full_page=True)
