"""Quality control: attention checks, tutorials, time per item and a verdict per enrollment.

Check results (:func:`check_result`):

- imported checks and tutorials compare the answer with ``item.expected`` (see
  ``annotation/protocols/``): every expected span overlapped by an annotator span, the score
  within ``score_min``/``score_max``, no span where ``no_spans``; for choice, the selected
  option(s) equal the expected ones (single-select: the one selected is among them);
- generated checks (``expected.type == "corrupted"``) pass when a span overlaps the corrupted
  phrase and the score is lower than the reference: the annotator's own score of the original
  item, else the mean submitted score of the original, else the check stays pending.

Verdict (:func:`verdict_for`), with the campaign's QC settings:

1. ``fail`` when at least ``qc_min_checks`` checks are decided and the pass rate is below
   ``qc_min_pass_rate``;
2. ``fail`` when more than ``qc_max_fast_fraction`` of the submitted items took less than
   ``qc_min_seconds_per_item`` (judged from 5 submissions on, or at the end; before that, an
   annotator over the limit is ``pending``, never ``pass``);
3. ``pass`` when at least ``qc_min_checks`` checks are decided (or the campaign has no checks
   and something was submitted);
4. otherwise ``pending`` — once the annotator has finished (``Enrollment.finished_at``) a
   pending verdict becomes ``pass``: there is no evidence against the annotator.

There is one verdict per enrollment and every reader gets the same one: the dashboard, the
campaign page, the exports, ``selectors.item_results`` (which counts only ``pass``) and the
Prolific completion code. Whether the work is over is read from the enrollment, never passed in
by the caller, so a page and the completion code cannot disagree about the same annotator (they
did: the code path judged time "at the end", the dashboard did not).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from annotation.models import Annotation, Campaign, Enrollment, Item
from annotation.protocols.base import SubmittedCheck

PASS, FAIL, PENDING = "pass", "fail", "pending"
MIN_SUBMISSIONS_FOR_TIME_VERDICT = 5


def _reference_score(item: Item, annotator_id: int) -> float | None:
    # A JSON value of the check (an integer, validated on import; None when absent).
    original_id: Any = (item.expected or {}).get("original_item_id")
    submitted = Annotation.objects.filter(
        item_id=original_id, status=Annotation.Status.SUBMITTED, score__isnull=False
    )
    own = submitted.filter(annotator_id=annotator_id).values_list("score", flat=True).first()
    if own is not None:
        return own
    scores = [s for s in submitted.values_list("score", flat=True) if s is not None]
    return statistics.fmean(scores) if scores else None


def check_result(annotation: Annotation, *, reference: float | None = None) -> bool | None:
    """Pass (True), fail (False) or pending (None) for a submitted check or tutorial answer.

    ``reference`` (generated checks only) saves a query when the caller already knows it.
    Regular items and drafts give ``None``.
    """
    item = annotation.item
    if item.kind == Item.Kind.REGULAR or not annotation.is_submitted or not item.expected:
        return None

    def reference_score() -> float | None:
        # A generated check's reference costs a query: run it only when the protocol asks.
        if reference is not None:
            return reference
        return _reference_score(item, annotation.annotator_id)

    campaign = annotation.campaign
    check = SubmittedCheck(campaign, item, annotation.answer, annotation.score, reference_score)
    return campaign.get_protocol().check_answer(check)


@dataclass
class QCSummary:
    """Per-annotator QC numbers in one campaign (tutorials excluded except ``tutorial_*``)."""

    submitted: int = 0
    checks_passed: int = 0
    checks_failed: int = 0
    checks_pending: int = 0
    tutorial_passed: int = 0
    tutorial_failed: int = 0
    fast: int = 0
    total_seconds: float = 0.0
    median_seconds: float | None = None
    verdict: str = PENDING
    reasons: list[str] = field(default_factory=list)

    @property
    def checks_decided(self) -> int:
        return self.checks_passed + self.checks_failed

    @property
    def pass_rate(self) -> float | None:
        return self.checks_passed / self.checks_decided if self.checks_decided else None

    @property
    def fast_fraction(self) -> float | None:
        return self.fast / self.submitted if self.submitted else None


def _summarize(
    campaign: Campaign, annotations: list[Annotation], has_checks: bool, final: bool
) -> QCSummary:
    summary = QCSummary()
    durations = []
    for annotation in annotations:
        kind = annotation.item.kind
        result = check_result(annotation)
        if kind == Item.Kind.TUTORIAL:
            if result is True:
                summary.tutorial_passed += 1
            elif result is False:
                summary.tutorial_failed += 1
            continue
        summary.submitted += 1
        durations.append(annotation.time_spent_seconds)
        if annotation.time_spent_seconds < campaign.qc_min_seconds_per_item:
            summary.fast += 1
        if kind == Item.Kind.ATTENTION_CHECK:
            if result is True:
                summary.checks_passed += 1
            elif result is False:
                summary.checks_failed += 1
            else:
                summary.checks_pending += 1
    summary.total_seconds = round(sum(durations), 3)
    summary.median_seconds = statistics.median(durations) if durations else None

    enough_checks = summary.checks_decided >= max(1, campaign.qc_min_checks)
    rate = summary.pass_rate
    if enough_checks and rate is not None and rate < campaign.qc_min_pass_rate:
        summary.reasons.append(
            f"passed {summary.checks_passed} of {summary.checks_decided} attention checks "
            f"(needs {campaign.qc_min_pass_rate:.0%})"
        )
    fraction = summary.fast_fraction
    too_fast = fraction is not None and fraction > campaign.qc_max_fast_fraction
    time_judged = final or summary.submitted >= MIN_SUBMISSIONS_FOR_TIME_VERDICT
    if too_fast and time_judged:
        summary.reasons.append(
            f"{summary.fast} of {summary.submitted} items took under "
            f"{campaign.qc_min_seconds_per_item:g} s"
        )
    if summary.reasons:
        summary.verdict = FAIL
    elif too_fast:
        # Too fast so far, on too few items to judge: not a pass yet. A pass here let a
        # search run's human loop take the scores of an annotator who failed once they
        # finished (4 of 4 items under 3 s; issue 40).
        summary.verdict = PENDING
    elif enough_checks or (not has_checks and summary.submitted > 0):
        summary.verdict = PASS
    else:
        summary.verdict = PASS if final else PENDING
    return summary


def is_final(enrollment: Enrollment) -> bool:
    """The annotator has finished (no item left): time is judged and pending becomes pass."""
    return enrollment.finished_at is not None


def _submitted(campaign: Campaign):
    return (
        Annotation.objects.filter(campaign=campaign, status=Annotation.Status.SUBMITTED)
        .select_related("item", "campaign")
        .order_by("id")
    )


def _has_checks(campaign: Campaign) -> bool:
    return campaign.items.filter(kind=Item.Kind.ATTENTION_CHECK).exists()


def summary_for(enrollment: Enrollment, *, has_checks: bool | None = None) -> QCSummary:
    """QC numbers and verdict of one annotator in one campaign.

    ``has_checks`` saves a query when the caller judges several annotators of one campaign.
    """
    campaign = enrollment.campaign
    annotations = list(_submitted(campaign).filter(annotator_id=enrollment.annotator_id))
    if has_checks is None:
        has_checks = _has_checks(campaign)
    return _summarize(campaign, annotations, has_checks, is_final(enrollment))


def verdict_for(enrollment: Enrollment) -> str:
    """``"pass"``, ``"fail"`` or ``"pending"`` — what the dashboard shows and Prolific gets."""
    return summary_for(enrollment).verdict


def summaries_for_campaign(campaign: Campaign) -> dict[int, QCSummary]:
    """QC summary per annotator id for a whole campaign (for the campaign page).

    One annotator's submissions at a time, so a large campaign is never all in memory.
    """
    enrollments = Enrollment.objects.filter(campaign=campaign).select_related("campaign")
    has_checks = _has_checks(campaign)
    return {
        enrollment.annotator_id: summary_for(enrollment, has_checks=has_checks)
        for enrollment in enrollments.order_by("id")
    }


def verdicts_for_campaign(campaign: Campaign) -> dict[int, str]:
    """QC verdict per annotator id: one query per annotator, whatever their amount of work."""
    return {aid: summary.verdict for aid, summary in summaries_for_campaign(campaign).items()}


def annotation_flags(annotation: Annotation) -> dict[str, Any]:
    """Per-annotation QC flags for exports: ``too_fast`` and the check result if any."""
    result = check_result(annotation)
    return {
        "too_fast": annotation.time_spent_seconds < annotation.campaign.qc_min_seconds_per_item,
        "check": None
        if annotation.item.kind == Item.Kind.REGULAR
        else {True: PASS, False: FAIL, None: PENDING}[result],
    }


def qualification_result(enrollment: Enrollment) -> bool | None:
    """Whether the annotator passed the campaign's tutorials; ``None`` without tutorials."""
    campaign = enrollment.campaign
    tutorials = (
        _submitted(campaign)
        .filter(annotator_id=enrollment.annotator_id, item__kind=Item.Kind.TUTORIAL)
        .select_related("item")
    )
    results = [check_result(a) for a in tutorials]
    decided = [r for r in results if r is not None]
    if not decided:
        return None
    return sum(decided) / len(decided) >= campaign.qualification_min_accuracy
