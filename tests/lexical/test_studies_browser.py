"""Seed 004's human studies end to end in headless Chromium (Playwright).

An admin creates a Farsi (RTL) lexical-selection study from the new-study form, one study per
person; three native speakers sign up through the public link and answer every item with the
keyboard only (digits, Shift+digit, Ctrl+Enter), attention check included; an English speaker
is refused with the requirement named; one of the three is kept out of the rule-validation
study of the same language. The study page then shows the Table 2 numbers computed here, and
its DTAiLS CSV holds exactly the sufficient-context sentences. A Japanese (CJK) study is shown
once. Set ``LEXICAL_SCREENSHOTS`` to a folder to keep screenshots.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from annotation.models import Campaign
from lexical.models import (
    Concept,
    ConceptExample,
    ExampleSelection,
    Rule,
    RuleJob,
    SelectedExample,
    SelectionStudy,
    Variation,
)
from lexical.studies.rule_validation.services import create_study
from lexical.studies.selection_study.services import StudyParams, create_selection_study
from tests.annotation.factories import enrolled
from tests.core.test_offline_pages_browser import offline_page
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long test passphrase 42"
# (concept, {variation: corpus count}, [(English sentence, attested variation)]).
FARSI = [
    ("date", {"خرما": 60, "رطب": 30, "خارک": 10}, [
        ("We ate a fresh date from the tree.", "رطب"),
        ("The dried date kept for months.", "خرما"),
        ("An unripe date is crunchy.", "خارک"),
        ("She sold a box of sweet date paste.", "خرما"),
    ]),
    ("trip", {"سفر": 70, "گشت": 30}, [
        ("We booked a trip to Shiraz.", "سفر"),
        ("The short trip along the bazaar.", "گشت"),
    ]),
]  # fmt: skip
JAPANESE = [
    ("rice", {"ご飯": 50, "米": 40, "稲": 10}, [
        ("We had rice with grilled fish for dinner.", "ご飯"),
        ("The shop sells rice by the kilogram.", "米"),
    ]),
]  # fmt: skip


def _logged_in(browser, live_server, username: str):
    """``offline_page``, once the landing page's own requests are over: the live server shares
    one SQLite connection between its threads, so two requests at once can fail there."""
    page, outside = offline_page(browser, live_server, username)
    page.wait_for_load_state("networkidle")
    page.set_viewport_size({"width": 1280, "height": 900})
    return page, outside


def _screenshot(page, name: str) -> None:
    folder = os.environ.get("LEXICAL_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name), full_page=True)


def _selection(name: str, tgt_lang: str, concepts) -> ExampleSelection:
    """A selection of every sentence, plus one unselected example per concept (Table 2's pool)."""
    selection = ExampleSelection.objects.create(name=name, src_lang="en", tgt_lang=tgt_lang, seed=7)
    position = 0
    for lemma, counts, sentences in concepts:
        concept = Concept.objects.create(src_lang="en", tgt_lang=tgt_lang, lemma=lemma, pos="NOUN")
        selection.concepts.add(concept)
        variations = {
            v: Variation.objects.create(concept=concept, lemma=v, surface_forms=[v], count=n)
            for v, n in counts.items()
        }
        for source, attested in sentences:
            start = source.index(lemma)
            example = ConceptExample.objects.create(
                concept=concept, variation=variations[attested], src=source,
                tgt=f"… {attested} …", src_start=start, src_end=start + len(lemma),
            )  # fmt: skip
            SelectedExample.objects.create(selection=selection, example=example, position=position)
            position += 1
        ConceptExample.objects.create(
            concept=concept, variation=next(iter(variations.values())), src=f"One more {lemma}."
        )
    return selection


ATTESTED = {source: attested for _, _, sentences in FARSI for source, attested in sentences}
CONCEPT_OF = {source: lemma for lemma, _, sentences in FARSI for source, _ in sentences}


def _pick(annotator: int, source: str, options: list[str]) -> str:
    """Annotators 0 and 1 pick the attested variation of every "date" sentence, 2 another one;
    on "trip" only annotator 0 does: "date" sentences have sufficient context, "trip" ones not."""
    attested = ATTESTED[source]
    agrees = annotator in (0, 1) if CONCEPT_OF[source] == "date" else annotator == 0
    return attested if agrees else next(o for o in options if o != attested)


def _sign_up(browser, live_server, slug: str, username: str, native: str):
    page = browser.new_context().new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/annotation/join/{slug}/")
    page.fill("input[name=username]", username)
    page.fill("input[name=email]", f"{username}@example.org")
    page.fill("input[name=password]", PASSWORD)
    page.fill("input[name=native_language]", native)
    page.fill("input[name=working_languages]", "en")
    page.check("input[name=consent]")
    page.click("article.signup button[type=submit]")
    page.wait_for_load_state()
    return page, errors


def _answer_all_by_keyboard(page, annotator: int) -> list[str]:
    """Answer every served item with the keyboard only; returns the sources in served order."""
    served: list[str] = []
    while "/finish/" not in page.url:
        page.wait_for_selector("fieldset.choice")
        source = page.inner_text(".segment.source").strip()
        question = page.inner_text("fieldset.choice legend")
        options = [
            s.strip() for s in page.locator("fieldset.choice .option span").all_inner_texts()
        ]
        check = re.search(r'please select "([^"]+)"', question)
        if check:
            wanted = check.group(1)
        else:
            served.append(source)
            assert page.inner_text(".segment.source mark") == CONCEPT_OF[source]
            wanted = _pick(annotator, source, options)
        page.keyboard.press(str(options.index(wanted) + 1))
        page.keyboard.press("Shift+Digit3")
        page.wait_for_selector("#checklist.ready")
        with page.expect_navigation():
            page.keyboard.press("Control+Enter")
    return served


def _rule_validation_study(selection: ExampleSelection, *, one_study_per_person: bool = True):
    rule_job = RuleJob.objects.create(
        source=RuleJob.Source.SELECTION, selection=selection, engine="gpt", status="finished"
    )
    for concept in selection.concepts.all():
        for variation in concept.variations.all():
            Rule.objects.create(
                job=rule_job, concept=concept, variation=variation, generator="gpt",
                text=f"Use {variation.lemma} when the context fits.",
            )  # fmt: skip
    config = {"name": f"Rule validation of {selection.name}", "tgt_lang": "fa"}
    return create_study(
        {**config, "rule_jobs": [rule_job.pk], "one_study_per_person": one_study_per_person}
    )


def _expected_table2() -> tuple[int, list[str]]:
    """(sufficient sentences, their sources) from the votes ``_pick`` casts, majority of 3."""
    sufficient = []
    for source, attested in ATTESTED.items():
        votes = Counter(_pick(n, source, [attested, "other"]) for n in range(3))
        label, count = votes.most_common(1)[0]
        if count >= 2 and label == attested:
            sufficient.append(source)
    return len(sufficient), sufficient


def test_farsi_selection_study_from_sign_up_to_dtails(browser, live_server):
    UserFactory(username="admin", is_staff=True, is_superuser=True)
    farsi = _selection("Farsi dates and trips", "fa", FARSI)
    rule_study = _rule_validation_study(farsi)

    admin, outside = _logged_in(browser, live_server, "admin")
    admin.goto(f"{live_server.url}/lexical/selection-studies/new/")
    admin.select_option("select[name=selection]", str(farsi.pk))
    admin.fill("input[name=name]", "Farsi lexical selection")
    admin.fill("input[name=attention_checks]", "1")
    assert admin.is_checked("input[name=native_speakers]")
    admin.check("input[name=one_study_per_person]")
    with admin.expect_navigation():
        admin.click("button:has-text('Create study')")
    study = SelectionStudy.objects.get()
    campaign = study.campaign
    assert admin.url.endswith(f"/lexical/selection-studies/{study.pk}/")
    assert campaign.required_native_languages == ["fa"]
    assert campaign.exclusive_group == rule_study.campaign.exclusive_group != ""
    # Three keyboard answers in a few seconds are not "too fast" for this test.
    Campaign.objects.filter(pk=campaign.pk).update(qc_min_seconds_per_item=0)

    served: list[list[str]] = []
    pages = []
    for n in range(3):
        page, errors = _sign_up(browser, live_server, campaign.slug, f"native{n}", "fa")
        page.wait_for_selector("fieldset.choice")
        if n == 0:
            options = page.locator("fieldset.choice .option span")
            assert options.first.get_attribute("dir") == "auto"
            texts = options.all_inner_texts()
            assert set(texts) <= {"خرما", "رطب", "خارک", "سفر", "گشت"}
            direction = options.first.evaluate("el => getComputedStyle(el).direction")
            assert direction == "rtl"
            mark = page.locator(".segment.source mark").inner_text()
            assert mark in ("date", "trip")
            _screenshot(page, "annotate_fa.png")
        served.append(_answer_all_by_keyboard(page, n))
        assert errors == []
        pages.append(page)
    assert all(sorted(s) == sorted(ATTESTED) for s in served)
    assert len({tuple(s) for s in served}) > 1, "every annotator was served the same order"

    refused, _ = _sign_up(browser, live_server, campaign.slug, "english", "en")
    error = refused.locator("small.error, .message-error").all_inner_texts()
    assert any("fa" in e and "native" in e.lower() for e in error), error
    assert refused.locator("#language-requirement").is_visible()
    _screenshot(refused, "signup_refused.png")

    other = pages[0]
    other.goto(f"{live_server.url}/annotation/join/{rule_study.campaign.slug}/")
    other.click("article.signup button[type=submit]")
    other.wait_for_load_state()
    refusal = other.locator("body").inner_text()
    assert "Farsi lexical selection" in refusal and "may not take part in both" in refusal
    _screenshot(other, "exclusive_refused.png")

    admin.goto(f"{live_server.url}/lexical/selection-studies/{study.pk}/")
    progress = admin.locator("table.study-progress tr", has_text="Sentences complete")
    assert progress.locator("td").inner_text() == "6 / 6"
    cells = admin.locator("table.table2 tbody td").all_inner_texts()
    n_sufficient, sufficient_sources = _expected_table2()
    pool = ConceptExample.objects.filter(concept__in=farsi.concepts.all()).count()
    assert (n_sufficient, pool) == (4, 8)  # the four "date" sentences
    assert cells == [str(pool), "6", "6", f"{100 * n_sufficient / 6:.1f}", "0", str(n_sufficient)]
    # Each Farsi label is isolated, so the counts and "(3 submitted)" keep their place.
    votes = admin.locator("table.study-items td.votes").first
    assert votes.evaluate("el => getComputedStyle(el).direction") == "ltr"
    assert votes.locator("bdi").count() == 2 and "(3 submitted)" in votes.inner_text()
    marks = admin.locator("table.study-items mark").all_inner_texts()
    assert sorted(set(marks)) == ["date", "trip"]
    _screenshot(admin, "selection_study.png")

    with admin.expect_download() as download_info:
        admin.click("a[href$='/released.csv']")
    rows = list(csv.DictReader(io.StringIO(Path(download_info.value.path()).read_text("utf-8"))))
    assert sorted(r["source language text"] for r in rows) == sorted(sufficient_sources)
    assert {r["label"] for r in rows} <= {"خرما", "رطب", "خارک"}
    assert outside == []


def test_japanese_study_annotate_page(browser, live_server):
    selection = _selection("Japanese rice", "ja", JAPANESE)
    study = create_selection_study(selection, StudyParams(name="Japanese lexical selection"))
    enrolled(study.campaign, "jp1")  # enrolled directly: the sign-up is the Farsi test's
    page, outside = _logged_in(browser, live_server, "jp1")
    page.goto(f"{live_server.url}/annotation/campaigns/{study.campaign.pk}/next/")
    page.wait_for_selector("fieldset.choice")
    assert page.locator(".segment.source mark").inner_text() == "rice"
    texts = page.locator("fieldset.choice .option span").all_inner_texts()
    assert sorted(texts) == sorted(["ご飯", "米", "稲"])
    _screenshot(page, "annotate_ja.png")
    assert outside == []


def _answer_rules_by_keyboard(page, annotator: int, variation_of: dict[str, str]) -> None:
    """Answer every rule-validation item with the keyboard only: y/n, digits, 0, j, Ctrl+Enter.

    Annotator 1 says a "trip" variation is missing; annotator 2 marks خارک as not meaning
    "date" and judges the rules of خارک and گشت wrong; attention checks are answered right."""
    words = {lemma: set(counts) for lemma, counts, _ in FARSI}
    while "/finish/" not in page.url:
        page.wait_for_selector("fieldset.question")
        concept = page.inner_text(".segment.source").split()[0]
        page.keyboard.press("y" if annotator == 1 and concept == "trip" else "n")
        options = page.locator(
            "fieldset[data-question=precision] label.option:not(.none-option) span"
        ).all_inner_texts()
        intruders = [o for o in options if o not in words[concept]]
        if intruders:
            page.keyboard.press(str(options.index(intruders[0]) + 1))
        elif annotator == 2 and concept == "date":
            page.keyboard.press(str(options.index("خارک") + 1))
        else:
            page.keyboard.press("0")
        page.keyboard.press("j")
        for qid in page.locator("fieldset[data-question^='rule-']").evaluate_all(
            "els => els.map(el => el.dataset.question)"
        ):
            wrong = annotator == 2 and variation_of[qid] in ("خارک", "گشت")
            page.keyboard.press("n" if wrong else "y")
        page.wait_for_selector("#checklist.ready")
        with page.expect_navigation():
            page.keyboard.press("Control+Enter")


def test_farsi_rule_validation_by_keyboard_tables(browser, live_server):
    UserFactory(username="admin", is_staff=True, is_superuser=True)
    farsi = _selection("Farsi rules", "fa", FARSI)
    study = _rule_validation_study(farsi, one_study_per_person=False)
    campaign = study.campaign
    Campaign.objects.filter(pk=campaign.pk).update(qc_min_seconds_per_item=0)
    variation_of = {f"rule-{r.pk}": r.variation.lemma for r in Rule.objects.all()}

    for n in range(3):
        page, errors = _sign_up(browser, live_server, campaign.slug, f"rater{n}", "fa")
        if n == 0:
            _screenshot(page, "rule_validation_fa.png")
        _answer_rules_by_keyboard(page, n, variation_of)
        assert errors == []

    admin, outside = _logged_in(browser, live_server, "admin")
    admin.goto(f"{live_server.url}/lexical/rule-validation/{study.pk}/")
    _screenshot(admin, "rule_validation_study.png")

    def row(heading: str, label: str) -> list[str]:
        table = admin.locator(
            f"h2:has-text('{heading}') + table, h2:has-text('{heading}') + div table"
        )
        return table.locator("tr", has_text=label).locator("td").all_inner_texts()

    # 5 listed variations × 3 annotators, one "not this concept" (خارک, by annotator 2).
    assert row("Table 1", "Precision")[1:] == ["0.933 (14/15)", "1.000 (5/5)", "0"]
    # 2 concepts × 3 annotators, one "a variation is missing" (trip, by annotator 1).
    assert row("Table 1", "Recall")[1:] == ["0.833 (5/6)", "1.000 (2/2)", "0"]
    # 5 rules × 3 annotators, two judged wrong (by annotator 2 only: majorities stay correct).
    assert row("Table 3", "gpt")[1:] == ["0.867 (13/15)", "1.000 (5/5)", "0"]
    assert outside == []
