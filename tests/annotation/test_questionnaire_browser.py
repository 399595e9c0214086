"""A questionnaire item answered with the keyboard only, in headless Chromium (Playwright).

The annotator never touches the mouse: j/k move between questions, y/n answer yes/no
questions, digits pick options, 0 picks "none of these" (which clears the options), Tab and
Space work as in any form, Ctrl+Enter submits. Prompts in Persian (RTL) and Japanese (CJK).
"""

from __future__ import annotations

import pytest

from annotation.models import Annotation
from annotation.services.campaigns import create_campaign
from tests.annotation.factories import enrolled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ITEM = {
    "seg_id": "1", "src_lang": "en", "tgt_lang": "ja", "source": "art (noun): 美術, 芸術",
    "questions": [
        {"id": "missing", "family": "missing_variation", "type": "yes_no",
         "prompt": "آیا واژه‌ای جا افتاده است؟", "lang": "fa"},
        {"id": "wrong", "family": "wrong_variation", "type": "multiple",
         "prompt": "どれが「art」の意味ではありませんか？", "options": ["美術", "芸術", "アート"],
         "lang": "ja", "none_label": "どれでもない"},
        {"id": "rule-1", "family": "rule_correct", "type": "yes_no",
         "prompt": "Is rule 1 correct?"},
        {"id": "best", "type": "single", "prompt": "Which fits best?",
         "options": ["美術", "芸術"], "lang": "ja"},
    ],
}  # fmt: skip


def _open_next_item(page, live_server, campaign, user) -> None:
    """Log in on the page "next item" sends a stranger to; it then lands on the item."""
    user.set_password("correct horse battery")
    user.save()
    page.goto(f"{live_server.url}/annotation/campaigns/{campaign.pk}/next/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "correct horse battery")
    page.keyboard.press("Enter")
    page.wait_for_selector("fieldset.question")


def test_questionnaire_answered_by_keyboard_only(browser, live_server):
    campaign = create_campaign("Keyboard questionnaire", "questionnaire", [ITEM])
    annotator = enrolled(campaign, "kb")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    _open_next_item(page, live_server, campaign, annotator.user)

    # RTL and CJK prompts carry their direction and language.
    legend = page.locator("fieldset[data-question=missing] legend")
    assert legend.get_attribute("lang") == "fa"
    assert legend.evaluate("el => getComputedStyle(el).direction") == "rtl"
    assert page.locator("fieldset[data-question=wrong] legend").get_attribute("lang") == "ja"

    page.keyboard.press("y")  # question 1 (the first unanswered): yes; focus moves on
    page.keyboard.press("1")  # question 2: 美術 …
    page.keyboard.press("3")  # … and アート
    page.keyboard.press("0")  # then "none of these": clears both
    assert page.is_checked("input[name='qm.wrong'][value=none]")
    assert not page.is_checked("input[name='qm.wrong'][value='0']")
    page.keyboard.press("2")  # 芸術 instead: clears "none of these"
    assert not page.is_checked("input[name='qm.wrong'][value=none]")
    page.keyboard.press("j")  # to question 3
    page.keyboard.press("n")  # no (not "next item" on a questionnaire); focus on question 4
    page.keyboard.press("Shift+Tab")  # plain Tab order: back to question 3's radio group …
    page.keyboard.press("Tab")  # … and forward to question 4's
    page.keyboard.press("Space")  # 美術
    page.keyboard.press("ArrowDown")  # arrow keys move within the group: 芸術
    page.keyboard.press("k")  # back to question 3 and change its answer
    page.keyboard.press("y")
    page.wait_for_selector("#checklist.ready")
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")

    annotation = Annotation.objects.get()
    assert annotation.status == "submitted"
    assert annotation.answer == {
        "answers": {"missing": "yes", "wrong": [1], "rule-1": "yes", "best": 1},
        "comment": "",
    }
    assert errors == []
