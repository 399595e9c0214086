"""End to end in headless Chromium (Debian's ``/usr/bin/chromium``) driven by Playwright.

A Prolific participant signs up through the study link, marks an error span with the keyboard
only, scores, submits with Ctrl+Enter and lands on Prolific's completion URL with the pass code.
The navigation to Prolific is intercepted (``page.route``): the browser never leaves 127.0.0.1.
"""

from __future__ import annotations

from urllib.parse import urljoin

import pytest
from playwright.sync_api import expect

from annotation.models import Annotation, Annotator, Enrollment
from annotation.services.campaigns import create_campaign
from tests.annotation.factories import enrolled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PROLIFIC_HOST = "https://app.prolific.com"


def intercept_prolific(page, live_server) -> list[str]:
    """Record every redirect to Prolific and answer it locally; returns the URLs seen.

    Chromium does not route the later requests of a redirect chain, so the chain that starts
    at "next item" is followed here hop by hop (with the page's cookies) and stopped at the
    Prolific host; any direct request to that host is answered locally as well.
    """
    seen: list[str] = []
    completed = {"status": 200, "content_type": "text/html", "body": "<h1>Prolific: completed</h1>"}

    def to_prolific(route):
        seen.append(route.request.url)
        route.fulfill(**completed)

    def follow(route):
        url = route.request.url
        response = route.fetch(max_redirects=0)
        for _hop in range(10):
            if response.status not in (301, 302, 303, 307, 308):
                break
            url = urljoin(url, response.headers["location"])
            if url.startswith(PROLIFIC_HOST):
                seen.append(url)
                route.fulfill(**completed)
                return
            response = route.fetch(url=url, method="GET", max_redirects=0)
        route.fulfill(response=response)

    page.route(f"{PROLIFIC_HOST}/**", to_prolific)
    page.route(f"{live_server.url}/annotation/campaigns/*/next/", follow)
    return seen


def start_as_prolific_participant(page, live_server, campaign, pid: str) -> None:
    page.goto(
        f"{live_server.url}/annotation/join/{campaign.slug}/"
        f"?PROLIFIC_PID={pid}&STUDY_ID=study-1&SESSION_ID=session-1"
    )
    page.fill("input[name=native_language]", "German")
    page.fill("input[name=working_languages]", "English")
    page.check("input[name=consent]")
    page.click("button[type=submit]")
    page.wait_for_selector("#target .g")


def test_prolific_participant_annotates_with_the_keyboard(browser, live_server):
    target = "Der Stadtrat hat den Haushalt genehmigt."
    campaign = create_campaign(
        "Browser ESA", "esa",
        [{"doc_id": "d", "seg_id": 1, "src_lang": "en", "tgt_lang": "de",
          "source": "The city council approved the budget.", "target": target}],
        prolific_pass_code="C0MPLETE", prolific_fail_code="REJECTED", qc_min_seconds_per_item=0,
    )  # fmt: skip
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    prolific = intercept_prolific(page, live_server)

    start_as_prolific_participant(page, live_server, campaign, "PID-browser-1")
    page.keyboard.press("t")  # focus the translation
    page.keyboard.press("Control+ArrowRight")  # to "Stadtrat"
    for _ in range(8):
        page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("2")  # major
    page.keyboard.press("Enter")
    assert page.inner_text("#span-list").startswith("Stadtrat")
    page.keyboard.press("s")
    page.keyboard.type("45")
    page.wait_for_selector("#checklist.ready")
    with page.expect_navigation(url="**/next/"):
        page.keyboard.press("Control+Enter")
    assert prolific == [f"{PROLIFIC_HOST}/submissions/complete?cc=C0MPLETE"]
    assert "Prolific: completed" in page.content()
    assert errors == []
    page.close()

    annotator = Annotator.objects.get(prolific_pid="PID-browser-1")
    annotation = Annotation.objects.get(annotator=annotator)
    assert annotation.status == "submitted"
    assert annotation.answer["spans"] == [{"start": 4, "end": 12, "severity": "major"}]
    assert target[4:12] == "Stadtrat"
    assert annotation.score == 45.0
    assert Enrollment.objects.get(annotator=annotator).finished_at is not None


def test_shift_ctrl_arrows_select_whole_words_and_nothing_more(browser, live_server):
    target = "Der Stadtrat hat den Haushalt genehmigt."
    campaign = create_campaign(
        "Browser word selection", "esa",
        [{"doc_id": "d", "seg_id": 1, "src_lang": "en", "tgt_lang": "de",
          "source": "The city council approved the budget.", "target": target}],
        qc_min_seconds_per_item=0,
    )  # fmt: skip
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.route(f"{PROLIFIC_HOST}/**", lambda route: route.abort())  # never leave 127.0.0.1
    start_as_prolific_participant(page, live_server, campaign, "PID-browser-words")

    page.keyboard.press("t")
    page.keyboard.press("Control+ArrowRight")  # to "Stadtrat"
    page.keyboard.press("Shift+Control+ArrowRight")  # to its last letter, not the space after
    page.keyboard.press("Enter")
    page.keyboard.press("Control+ArrowRight")  # to "hat"
    page.keyboard.press("Shift+Control+ArrowRight")  # "hat"
    page.keyboard.press("Shift+Control+ArrowRight")  # "hat den"
    page.keyboard.press("Shift+Control+ArrowLeft")  # back to "hat"
    page.keyboard.press("Enter")
    assert [q.inner_text() for q in page.query_selector_all("#span-list .quote")] == [
        "Stadtrat",
        "hat",
    ]
    page.keyboard.press("s")
    page.keyboard.type("60")
    page.wait_for_selector("#checklist.ready")
    with page.expect_navigation(url="**/finish/"):
        page.keyboard.press("Control+Enter")
    assert errors == []
    page.close()

    annotation = Annotation.objects.get(status="submitted")
    assert annotation.answer["spans"] == [
        {"start": 4, "end": 12, "severity": "minor"},
        {"start": 13, "end": 16, "severity": "minor"},
    ]
    assert (target[4:12], target[13:16]) == ("Stadtrat", "hat")


def test_a_flag_is_one_character_for_the_keyboard(browser, live_server):
    target = "Made in 🇩🇪, sold 👨\u200d👩\u200d👧."
    campaign = create_campaign(
        "Browser flags", "esa",
        [{"doc_id": "d", "seg_id": 1, "source": "Made in Germany, sold to families.",
          "target": target}],
        qc_min_seconds_per_item=0,
    )  # fmt: skip
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.route(f"{PROLIFIC_HOST}/**", lambda route: route.abort())  # never leave 127.0.0.1
    start_as_prolific_participant(page, live_server, campaign, "PID-browser-flags")

    page.keyboard.press("t")
    for _ in range(8):  # M a d e ␣ i n ␣
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Shift+ArrowRight")  # one step: the whole flag, both regional indicators
    page.keyboard.press("Shift+ArrowLeft")
    page.keyboard.press("Enter")
    for _ in range(8):  # 🇩🇪 , ␣ s o l d ␣
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")  # the family emoji, one grapheme of five code points
    assert [q.inner_text() for q in page.query_selector_all("#span-list .quote")] == [
        "🇩🇪",
        "👨\u200d👩\u200d👧",
    ]
    page.keyboard.press("s")
    page.keyboard.type("50")
    page.wait_for_selector("#checklist.ready")
    with page.expect_navigation(url="**/finish/"):
        page.keyboard.press("Control+Enter")
    assert errors == []
    page.close()

    spans = Annotation.objects.get(status="submitted").answer["spans"]
    assert [target[s["start"] : s["end"]] for s in spans] == ["🇩🇪", "👨\u200d👩\u200d👧"]


def test_cjk_and_rtl_offsets_are_code_points(browser, live_server):
    cjk = "東京で👩\u200d💻を使います。"
    arabic = "نسي مظلته في القطار."
    items = [
        {"doc_id": "ja", "seg_id": 1, "source": "I use 👩‍💻 in Tokyo.", "target": cjk,
         "tgt_lang": "ja"},
        {"doc_id": "ar", "seg_id": 1, "source": "He forgot his umbrella on the train.",
         "target": arabic, "tgt_lang": "ar"},
    ]  # fmt: skip
    campaign = create_campaign("Browser scripts", "esa", items, qc_min_seconds_per_item=0)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.route(f"{PROLIFIC_HOST}/**", lambda route: route.abort())  # never leave 127.0.0.1
    start_as_prolific_participant(page, live_server, campaign, "PID-browser-2")

    # Japanese: Enter marks the word at the cursor (東京); the emoji is one grapheme of three
    # code points.
    page.keyboard.press("t")
    page.keyboard.press("Enter")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Shift+Enter")  # Shift does not matter: Enter marks the unit's word
    page.keyboard.press("s")
    page.keyboard.type("50")
    page.wait_for_selector("#checklist.ready")
    with page.expect_navigation(url="**/annotation/items/**"):
        page.keyboard.press("Control+Enter")
    page.wait_for_selector("#target .g")

    # Arabic is right-to-left: the left arrow moves forward in reading order.
    page.keyboard.press("t")
    page.keyboard.press("Control+ArrowLeft")
    page.keyboard.press("Enter")
    page.keyboard.press("s")
    page.keyboard.type("70")
    page.wait_for_selector("#checklist.ready")
    with page.expect_navigation(url="**/finish/"):
        page.keyboard.press("Control+Enter")
    assert errors == []
    page.close()

    answers = {
        a.item.doc_id: a.answer["spans"]
        for a in Annotation.objects.select_related("item").filter(status="submitted")
    }
    assert answers["ja"] == [
        {"start": 0, "end": 2, "severity": "minor"},
        {"start": 3, "end": 6, "severity": "minor"},
    ]
    assert cjk[3:6] == "👩\u200d💻"
    assert answers["ar"] == [{"start": 4, "end": 9, "severity": "minor"}]
    assert arabic[4:9] == "مظلته"


def test_draft_made_after_the_session_expired_is_saved_after_login(browser, live_server):
    campaign = create_campaign(
        "Browser drafts", "esa",
        [{"doc_id": "d", "seg_id": 1, "source": "Good morning.", "target": "Guten Morgen."}],
    )  # fmt: skip
    annotator = enrolled(campaign, "drafter")
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/?next=/annotation/campaigns/{campaign.pk}/next/")
    page.fill("input[name=username]", "drafter")
    page.fill("input[name=password]", "correct horse battery")
    page.click("button[type=submit]")
    page.wait_for_selector("#target .g")
    page.keyboard.press("t")
    page.keyboard.press("Enter")  # marks "Guten"
    page.wait_for_selector("#save-status:has-text('Draft saved')")

    # The session expires (cookie gone); the annotator keeps working.
    session = [c for c in context.cookies() if c["name"] == "sessionid"]
    context.clear_cookies(name="sessionid")
    page.keyboard.press("s")
    page.keyboard.type("35")
    page.wait_for_selector("#save-status:has-text('Session expired')")

    # Logging in again in another tab; back on the annotation tab the draft is saved.
    login = context.new_page()
    login.goto(f"{live_server.url}/accounts/login/")
    login.fill("input[name=username]", "drafter")
    login.fill("input[name=password]", "correct horse battery")
    login.click("button[type=submit]")
    # Close the tab only once the login has landed: closing it with the POST or its redirect in
    # flight has left Playwright waiting on a page that was going away.
    login.wait_for_url(lambda url: "/accounts/login/" not in url)
    login.close()
    page.bring_to_front()
    page.evaluate("window.dispatchEvent(new Event('focus'))")
    page.wait_for_selector("#save-status:has-text('Draft saved')")
    context.close()

    assert session  # there was a session to lose
    draft = Annotation.objects.get(annotator=annotator).draft
    assert draft["spans"] == [{"start": 0, "end": 5, "severity": "minor"}]
    assert draft["score"] == 35


def test_mouse_selection_snaps_to_words(browser, live_server):
    target = "Der Bürgermeister versprach mehr Wohnraum."
    campaign = create_campaign(
        "Browser mouse", "esa", [{"doc_id": "d", "seg_id": 1, "source": "s", "target": target}]
    )
    annotator = enrolled(campaign, "mouser")
    page = browser.new_page()
    page.goto(f"{live_server.url}/accounts/login/?next=/annotation/campaigns/{campaign.pk}/next/")
    page.fill("input[name=username]", "mouser")
    page.fill("input[name=password]", "correct horse battery")
    page.click("button[type=submit]")
    units = page.locator("#target .g")
    units.first.wait_for()
    start, end = units.nth(1).bounding_box(), units.nth(7).bounding_box()  # "er Bürg"
    page.mouse.move(start["x"] + 1, start["y"] + start["height"] / 2)
    page.mouse.down()
    page.mouse.move(end["x"] + end["width"] - 1, end["y"] + end["height"] / 2, steps=5)
    page.mouse.up()
    page.wait_for_selector("#save-status:has-text('Draft saved')")
    page.close()
    draft = Annotation.objects.get(annotator=annotator).draft
    assert draft["spans"] == [{"start": 0, "end": 17, "severity": "minor"}]
    assert target[0:17] == "Der Bürgermeister"


def login_and_open(browser, live_server, campaign, username: str):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/accounts/login/?next=/annotation/campaigns/{campaign.pk}/next/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "correct horse battery")
    page.click("button[type=submit]")
    return page, errors


def test_hybrid_typed_span_score_then_a_flagged_item(browser, live_server):
    target = "Der Stadtrat hat den Haushalt genehmigt."
    items = [{"doc_id": "d", "seg_id": n, "source": "The council approved the budget.",
              "target": target} for n in (1, 2)]  # fmt: skip
    campaign = create_campaign("Browser hybrid", "esa_mqm", items, qc_min_seconds_per_item=0)
    annotator = enrolled(campaign, "hybrid")
    page, errors = login_and_open(browser, live_server, campaign, "hybrid")
    page.wait_for_selector("#target .g")
    page.keyboard.press("t")
    page.keyboard.press("Enter")  # marks the word at the cursor: "Der"
    page.select_option('select[data-role="category"]', "Accuracy")
    page.locator("#span-list select").nth(2).select_option("Mistranslation")
    page.fill("#score-input", "60")
    page.wait_for_selector("#checklist.ready")
    first_item = page.url
    page.click("#submit-button")
    page.wait_for_url(lambda url: url != first_item)  # the next item
    page.wait_for_selector("#target .g")
    page.check("#non-scorable")
    assert page.is_hidden("#score-input") and "Say briefly why" in page.inner_text("#checklist")
    page.fill("#non-scorable-reason", "The source is not English")
    page.wait_for_selector("#checklist.ready")
    page.keyboard.press("Control+Enter")
    page.wait_for_url("**/finish/")
    assert errors == []
    page.close()
    first, second = Annotation.objects.filter(annotator=annotator).order_by("item__position")
    assert first.answer["spans"] == [
        {
            "start": 0,
            "end": 3,
            "severity": "minor",
            "category": "Accuracy",
            "subcategory": "Mistranslation",
        }
    ]
    assert (first.score, first.mqm_score) == (60.0, 1.0)
    assert second.answer == {"spans": [], "non_scorable": True,
                             "non_scorable_reason": "The source is not English"}  # fmt: skip
    assert second.score is None


def test_translation_task_in_the_browser(browser, live_server):
    campaign = create_campaign(
        "Browser translation", "translation", [{"source": "The cat sat on the mat."}],
        src_lang="en", tgt_lang="cs", qc_min_seconds_per_item=0,
    )  # fmt: skip
    annotator = enrolled(campaign, "translator")
    page, errors = login_and_open(browser, live_server, campaign, "translator")
    page.wait_for_selector("#translation-input")
    # The checklist is written by the page's script once it has set itself up: wait for it.
    expect(page.locator("#checklist")).to_contain_text("Write the translation.")
    page.keyboard.press("w")
    page.keyboard.type("Kočka seděla na rohožce.")
    page.wait_for_selector("#checklist.ready")
    page.keyboard.press("Control+Enter")
    page.wait_for_url("**/finish/")
    assert errors == []
    page.close()
    answer = Annotation.objects.get(annotator=annotator).answer
    assert answer == {"translation": "Kočka seděla na rohožce.", "comment": ""}


def test_s_then_digits_replace_a_restored_draft_score(browser, live_server):
    # Regression: "s" focused the score without selecting it, so typing 45 after a draft of 30
    # gave 3045, silently clamped to 100.
    campaign = create_campaign(
        "Browser rescore", "esa",
        [{"doc_id": "d", "seg_id": 1, "source": "Good night.", "target": "Gute Nacht."}],
    )  # fmt: skip
    annotator = enrolled(campaign, "rescorer")
    page = browser.new_page()
    page.goto(f"{live_server.url}/accounts/login/?next=/annotation/campaigns/{campaign.pk}/next/")
    page.fill("input[name=username]", "rescorer")
    page.fill("input[name=password]", "correct horse battery")
    page.click("button[type=submit]")
    page.wait_for_selector("#target .g")
    page.keyboard.press("s")
    page.keyboard.type("30")
    page.wait_for_selector("#save-status:has-text('Draft saved')")
    page.reload()
    page.wait_for_selector("#target .g")
    assert page.input_value("#score-input") == "30"
    page.keyboard.press("s")
    page.keyboard.type("45")
    page.wait_for_selector("#save-status:has-text('Draft saved')")
    page.close()
    assert Annotation.objects.get(annotator=annotator).draft["score"] == 45


def test_a_selection_across_a_bold_tag_is_saved_in_visible_text_offsets(browser, live_server):
    # An html campaign (ADR 0033): the target keeps its markup; offsets count the visible text.
    target = 'Der 🐕 <b>große Hund</b> <img src=x onerror="window.pwned=1">lief weg.'
    visible = "Der 🐕 große Hund lief weg."
    campaign = create_campaign(
        "Browser HTML", "esa",
        [{"doc_id": "d", "seg_id": 1, "src_lang": "en", "tgt_lang": "de",
          "source": "The <i>big</i> dog ran away.", "target": target}],
        text_format="html", prolific_pass_code="C0MPLETE", qc_min_seconds_per_item=0,
    )  # fmt: skip
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    intercept_prolific(page, live_server)

    start_as_prolific_participant(page, live_server, campaign, "PID-html-1")
    # One grapheme per code point here (the dog is one code point), so unit k is offset k.
    first, last = visible.index("Hund"), visible.index("lief") + 3
    assert (
        page.eval_on_selector(f'#target .g[data-k="{first}"]', "e => e.parentElement.tagName")
        == "B"
    )
    assert (
        page.eval_on_selector(f'#target .g[data-k="{last}"]', "e => e.parentElement.id") == "target"
    )
    start = page.locator(f'#target .g[data-k="{first}"]').bounding_box()
    end = page.locator(f'#target .g[data-k="{last}"]').bounding_box()
    page.mouse.move(start["x"] + 2, start["y"] + start["height"] / 2)
    page.mouse.down()
    page.mouse.move(end["x"] + end["width"] - 2, end["y"] + end["height"] / 2, steps=5)
    page.mouse.up()
    assert page.inner_text("#span-list").startswith("Hund lief")
    assert page.evaluate("window.pwned") is None
    page.keyboard.press("s")
    page.keyboard.type("55")
    page.wait_for_selector("#checklist.ready")
    with page.expect_navigation(url="**/next/"):
        page.keyboard.press("Control+Enter")

    annotation = Annotation.objects.get(item__campaign=campaign)
    (span,) = annotation.answer["spans"]
    assert (span["start"], span["end"]) == (visible.index("Hund"), visible.index("lief") + 4)
    assert visible[span["start"] : span["end"]] == "Hund lief"
    assert errors == []


TRICKY_HTML = [
    "AT&T &copy &notanentity; &amp;amp; 1 < 2 > 0",
    "a\r\nb\rc\x00d &#0; &#xD800;",
    "<b>bold <i>both</b> after</i> end",
    "<table><tr><td>cell</td></tr></table>tail<p>para<br>line",
    '<span class="x">in</span>\u00a0&nbsp;<sub>2</sub><sup>n</sup>',
    "<textarea><b>raw</b></textarea><noscript>ns</noscript><template>tp</template>",
    "<svg><title>t</title></svg><math><mi>x</mi></math>\u200d👩‍👩‍👧 שָׁלוֹם 東京",
    "<!-- c --><![CDATA[cd]]><?pi?>text</br>",
]


def test_the_browser_reads_sanitised_html_as_the_server_does(browser):
    # The span editor counts the DOM's text nodes (each <br> one "\n"); the server counts
    # html_text.visible_text. Both must agree on every stored HTML, hostile input included.
    from annotation import html_text

    page = browser.new_page()
    read = """html => {
        const t = document.createElement("template");
        t.innerHTML = html;
        const show = NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT;
        const w = document.createTreeWalker(t.content, show);
        let out = "";
        for (let n = w.nextNode(); n; n = w.nextNode()) {
            if (n.nodeType === Node.TEXT_NODE) out += n.data;
            else if (n.nodeName === "BR") out += "\\n";
        }
        return out;
    }"""
    for raw in TRICKY_HTML:
        sanitized = html_text.sanitize(raw)
        assert page.evaluate(read, sanitized) == html_text.visible_text(sanitized), raw
