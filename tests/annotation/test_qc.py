"""Quality control: attention checks (imported and generated), time thresholds, verdicts."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from annotation import corruption, qc
from annotation.models import Enrollment, Item
from annotation.services.campaigns import create_campaign, generate_attention_checks
from annotation.services.claims import next_item_for
from annotation.services.submissions import start_viewing, submit_annotation
from tests.annotation.factories import choice_item, enrolled, esa_answer, esa_item

pytestmark = pytest.mark.django_db

T0 = timezone.now()


def work(annotator, campaign, score_for, seconds=10.0):
    """Do every item: ``score_for(item)`` gives the ESA answer."""
    now = T0
    while (item := next_item_for(annotator, campaign, now=now)) is not None:
        start_viewing(annotator, item, now=now)
        now += timedelta(seconds=seconds)
        submit_annotation(annotator, item, score_for(item), now=now)
        now += timedelta(seconds=1)
    return Enrollment.objects.get(annotator=annotator, campaign=campaign)


def checks_campaign(**settings):
    span = {"start": 0, "end": 8}
    check = "attention_check"
    items = [esa_item(1), esa_item(2),
             esa_item(3, kind=check, expected={"score_max": 40, "spans": [span]}),
             esa_item(4, kind=check, expected={"score_min": 90, "no_spans": True})]  # fmt: skip
    return create_campaign("Checks", "esa", items, overlap=2, **settings)


def careful(item):
    if item.kind == "attention_check" and item.expected.get("no_spans"):
        return {"spans": [], "score": 95}
    if item.kind == "attention_check":
        return esa_answer(20, [{"start": 2, "end": 5, "severity": "major"}])
    return esa_answer(80)


def test_careful_annotator_passes_and_careless_fails():
    campaign = checks_campaign()
    good = work(enrolled(campaign, "good"), campaign, careful)
    bad = work(enrolled(campaign, "bad"), campaign, lambda item: esa_answer(70))
    summary = qc.summary_for(good)
    assert (summary.checks_passed, summary.checks_failed, summary.verdict) == (2, 0, "pass")
    bad_summary = qc.summary_for(bad)
    assert (bad_summary.checks_passed, bad_summary.verdict) == (0, "fail")
    assert bad_summary.reasons == ["passed 0 of 2 attention checks (needs 80%)"]
    assert qc.summaries_for_campaign(campaign)[bad.annotator_id].verdict == "fail"


def test_too_fast_on_too_few_items_is_pending_not_a_pass_until_the_end():
    items = [esa_item(i) for i in range(4)]
    campaign = create_campaign("No checks", "esa", items, overlap=1)
    annotator = enrolled(campaign, "speedy")
    now = T0
    for _ in range(4):
        item = next_item_for(annotator, campaign, now=now)
        start_viewing(annotator, item, now=now)
        now += timedelta(seconds=1)
        submit_annotation(annotator, item, esa_answer(50), now=now)
    enrollment = Enrollment.objects.get(annotator=annotator, campaign=campaign)
    summary = qc.summary_for(enrollment)
    assert (summary.submitted, summary.fast, summary.verdict, summary.reasons) == (
        4,
        4,
        "pending",
        [],
    )
    assert next_item_for(annotator, campaign, now=now) is None  # finished
    enrollment.refresh_from_db()
    assert qc.summary_for(enrollment).reasons == ["4 of 4 items took under 3 s"]
    assert qc.verdict_for(enrollment) == "fail"


def test_too_fast_annotators_fail_on_time():
    campaign = checks_campaign(qc_min_seconds_per_item=5, qc_max_fast_fraction=0.5)
    enrollment = work(enrolled(campaign, "speedy"), campaign, careful, seconds=1)
    assert enrollment.finished_at is not None  # finished: time is judged on every item
    summary = qc.summary_for(enrollment)
    assert summary.fast == 4 and summary.verdict == "fail"
    assert summary.reasons == ["4 of 4 items took under 5 s"]


def test_pending_until_enough_checks_then_final_passes():
    campaign = checks_campaign(qc_min_checks=2, qc_min_seconds_per_item=0)
    annotator = enrolled(campaign, "new")
    enrollment = Enrollment.objects.get(annotator=annotator)
    assert qc.verdict_for(enrollment) == "pending"
    item = next_item_for(annotator, campaign)
    submit_annotation(annotator, item, esa_answer(80))
    assert qc.verdict_for(enrollment) == "pending"
    enrollment.finished_at = timezone.now()  # the annotator has no item left
    assert qc.verdict_for(enrollment) == "pass"


def test_choice_checks_compare_option_labels():
    items = [choice_item(1, kind="attention_check", expected="芸術"), choice_item(2)]
    campaign = create_campaign("Choice QC", "choice", items, ask_confidence=False)
    annotator = enrolled(campaign, "c")
    item = next_item_for(annotator, campaign)
    result = submit_annotation(annotator, item, {"selected": [1]})
    assert qc.check_result(result.annotation) is True
    result = submit_annotation(annotator, item, {"selected": [0]})
    assert qc.check_result(result.annotation) is False
    assert qc.annotation_flags(result.annotation) == {"too_fast": True, "check": "fail"}


def test_generated_checks_corrupt_a_phrase_and_compare_with_the_original():
    items = [esa_item(i, target=f"Der Hund {i} lief schnell über die grüne Wiese nach Hause.")
             for i in range(1, 4)]  # fmt: skip
    campaign = create_campaign("Gen", "esa", items, overlap=1)
    created = generate_attention_checks(campaign, 2, np.random.default_rng(7))
    assert len(created) == 2
    for check in created:
        original = Item.objects.get(pk=check.expected["original_item_id"])
        (span,) = check.expected["spans"]
        assert check.target != original.target and check.kind == "attention_check"
        assert check.target[: span["start"]] == original.target[: span["start"]]
        assert check.origin_ref == str(original.pk)

    def attentive(item):
        if item.kind == "regular":
            return esa_answer(90)
        span = item.expected["spans"][0]
        return esa_answer(40, [{"start": span["start"], "end": span["end"], "severity": "major"}])

    enrollment = work(enrolled(campaign, "g"), campaign, attentive)
    summary = qc.summary_for(enrollment)
    assert (summary.checks_passed, summary.checks_failed, summary.verdict) == (2, 0, "pass")
    # Scoring the corrupted copy as high as the original fails the check, marked span or not.
    check = created[0]
    span = check.expected["spans"][0]
    hit = [{"start": span["start"], "end": span["end"], "severity": "minor"}]
    revised = submit_annotation(enrollment.annotator, check, esa_answer(95, hit))
    assert qc.check_result(revised.annotation) is False
    # A span elsewhere (the final full stop, never part of a corrupted phrase) does not count.
    away = [{"start": len(check.target) - 1, "end": len(check.target), "severity": "major"}]
    revised = submit_annotation(enrollment.annotator, check, esa_answer(10, away))
    assert qc.check_result(revised.annotation) is False


def test_generated_check_without_reference_is_pending():
    items = [esa_item(1, target="Ein ganz normaler Satz mit einigen Wörtern darin.")]
    campaign = create_campaign("Pending", "esa", items)
    (check,) = generate_attention_checks(campaign, 1, np.random.default_rng(1))
    holder = enrolled(campaign, "holder")
    assert next_item_for(holder, campaign).kind == "regular"  # holds the only slot
    annotator = enrolled(campaign, "p")
    assert next_item_for(annotator, campaign) == check
    span = check.expected["spans"][0]
    answer = esa_answer(30, [{"start": span["start"], "end": span["end"], "severity": "major"}])
    result = submit_annotation(annotator, check, answer)
    assert qc.check_result(result.annotation) is None


@pytest.mark.parametrize(
    "text",
    ["The quick brown fox jumps over the lazy dog.", "東京の美術館で絵画を鑑賞しました。",
     "تم تأجيل الاجتماع حتى الأسبوع المقبل."],
)  # fmt: skip
def test_corruption_changes_only_the_reported_phrase(text):
    donors = ["Another sentence with different words entirely.", "別の文章です。"]
    for seed in range(20):
        result = corruption.corrupt(text, donors, np.random.default_rng(seed))
        assert result is not None
        assert result.text[: result.start] == text[: result.start]
        tail = len(text) - (result.start + len(result.original_phrase))
        assert result.text[len(result.text) - tail :] == text[len(text) - tail :]
        assert result.text[result.start : result.end] != result.original_phrase
