"""Drafts, activity and submission: viewing an item, heartbeats, autosaved drafts and the
idempotent submission that counts a judgment once (``item_completed`` when an item is done).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation import hot_sql
from annotation.models import Annotation, Annotator, Assignment, Campaign, Enrollment, Item
from annotation.refusals import AnswerInvalid, NotAllowed
from annotation.services import adaptive
from annotation.services.claims import check_enrollment, check_enrollment_status
from annotation.signals import item_completed

IDLE_GAP_CAP_SECONDS = 60.0
"""Time between two signs of activity on an item counts at most this much (idle breaks)."""


def clean_answer(campaign: Campaign, item: Item, answer: Any):
    """The campaign's protocol cleans ``answer`` with the campaign's and item's settings."""
    protocol = campaign.get_protocol()
    return protocol.clean(answer, protocol.answer_context(campaign, item))


def _add_activity(annotation: Annotation, now: datetime) -> float:
    gap = (now - annotation.last_activity_at).total_seconds()
    return round(annotation.time_spent_seconds + min(max(gap, 0.0), IDLE_GAP_CAP_SECONDS), 3)


def _locked_annotation(annotator: Annotator, item: Item) -> Annotation:
    annotation = (
        # of=("self",): locking the joined campaign row too would serialize (and deadlock)
        # every submission of the campaign against the claims inserting rows that point to it.
        Annotation.objects.select_for_update(of=("self",))
        .select_related("campaign")
        .filter(item=item, annotator=annotator)
        .first()
    )
    if annotation is None:
        raise NotAllowed("This item is not assigned to you.")
    return annotation


def _enrollment_of(annotator: Annotator, campaign: Campaign) -> Enrollment | None:
    # A claim outlives a change of status: a paused or rejected annotator still holds the
    # items claimed before, so every write on them checks the enrollment again.
    return Enrollment.objects.filter(campaign=campaign, annotator=annotator).first()


def _renew_claim(annotation: Annotation, now: datetime) -> None:
    # Only a claim still held is renewed: a released one gave its slot back (live_slots), and
    # taking it again needs the item lock, which autosaves do not take. Its draft is kept and
    # its submission is still counted, above the overlap if need be (submit_annotation).
    Assignment.objects.filter(
        item_id=annotation.item_id,
        annotator_id=annotation.annotator_id,
        status=Assignment.Status.ACTIVE,
    ).update(expires_at=now + timedelta(seconds=annotation.campaign.claim_ttl_seconds))


def start_viewing(annotator: Annotator, item: Item, *, now=None) -> Annotation:
    """The annotator opened the item: activity starts now (time before this is not counted)."""
    now = now or timezone.now()
    with transaction.atomic():
        annotation = _locked_annotation(annotator, item)
        annotation.last_activity_at = now
        annotation.save(update_fields=["last_activity_at"])
    return annotation


def record_activity(annotator: Annotator, item: Item, *, now=None) -> Annotation:
    """A heartbeat while the annotator works: adds the gap since the last one, capped."""
    now = now or timezone.now()
    with transaction.atomic():
        annotation = _locked_annotation(annotator, item)
        annotation.time_spent_seconds = _add_activity(annotation, now)
        annotation.last_activity_at = now
        annotation.save(update_fields=["time_spent_seconds", "last_activity_at"])
        if not annotation.is_submitted:
            _renew_claim(annotation, now)
    return annotation


def save_draft(
    annotator: Annotator, item: Item, draft: Any, *, now=None
) -> tuple[Annotation, list[str]]:
    """Autosave the annotator's working copy of their answer; returns (annotation, missing).

    Incomplete drafts are fine (``missing`` says what a submission still needs); invalid values
    raise :class:`AnswerInvalid` and save nothing. Saving counts as activity and renews the
    claim. On a submitted annotation the draft holds a revision in progress; the submitted
    ``answer`` changes only when it is submitted again.
    """
    now = now or timezone.now()
    with transaction.atomic():
        annotation = _locked_annotation(annotator, item)
        campaign = annotation.campaign
        check_enrollment(_enrollment_of(annotator, campaign))
        if annotation.is_submitted and not campaign.is_open:
            raise NotAllowed("This campaign is closed; submissions can no longer change.")
        cleaned, errors, missing = clean_answer(campaign, item, draft)
        if errors:
            raise AnswerInvalid(errors, [])
        annotation.draft = cleaned
        annotation.time_spent_seconds = _add_activity(annotation, now)
        annotation.last_activity_at = now
        annotation.save(
            update_fields=["draft", "time_spent_seconds", "last_activity_at", "updated_at"]
        )
        if not annotation.is_submitted:
            _renew_claim(annotation, now)
    return annotation, missing


def compute_scores(
    campaign: Campaign, answer: Mapping[str, Any]
) -> tuple[float | None, float | None]:
    """(score on 0–100, raw MQM penalty) of a cleaned answer."""
    return campaign.get_protocol().submission_scores(campaign, answer)


@dataclass
class SubmitResult:
    annotation: Annotation
    created: bool
    """True for the first submission of this annotation, False for revisions and replays."""
    replayed: bool = False
    """True when the idempotency key was seen before: nothing changed."""


def submit_annotation(
    annotator: Annotator,
    item: Item,
    answer: Any,
    *,
    idempotency_key: str = "",
    now=None,
) -> SubmitResult:
    """Submit (or revise) the annotator's answer for an item they claimed; idempotent.

    1. A request whose ``idempotency_key`` was already used by this annotator returns the
       annotation it produced and changes nothing (retries, double clicks, replayed API calls).
    2. The (item, annotator) annotation row is locked; it exists since the claim, so a double
       submit with different keys can only update it, never create a second annotation.
    3. The answer must be complete and valid (:class:`AnswerInvalid` lists what is wrong or
       missing); the score is computed (``annotation/scoring.py`` for MQM).
    4. The first submission marks the claim submitted and adds one to ``item.completed_count``
       with an ``F()`` update, under the item's row lock for regular items; when a regular
       item reaches the overlap, ``item_completed`` is sent after commit (once). Later
       submissions are revisions (allowed while the campaign is open).
    5. Finished work is never refused for lack of room: when an annotator's claim lapsed and
       someone else took the slot, whichever of the two submits second is counted too, above
       the overlap (``completed_count > overlap``), and the item is flagged for the organisers
       (:func:`annotation.selectors.over_overlap_items`, the dashboard). Both judgments are
       kept; neither annotator's work is lost (ADR 0049).
    6. Only an approved enrollment may submit (:class:`EnrollmentBlocked` otherwise), whatever
       it held before its status changed.
    """
    now = now or timezone.now()
    key = (idempotency_key or "").strip()[:64]
    with transaction.atomic():
        return _submit_locked(annotator, item, answer, key, now)


@dataclass(frozen=True)
class _SubmitChecks:
    """What a submission checks besides the annotation, read in the query that locks it."""

    enrollment_status: str | None
    claim_status: str | None
    key_item_id: int | None
    """The item the idempotency key was first used for, if it was."""


def _locked_for_submit(
    annotator: Annotator, item: Item, key: str
) -> tuple[Annotation, _SubmitChecks]:
    """The annotation row, locked, with its campaign, the enrollment's status, the claim's
    status and the item a given idempotency key was first used for, in one query.

    Hand-written (:mod:`annotation.hot_sql`): compiled by the ORM, this query of three
    subqueries cost more CPU than any other statement of a submission.
    """
    found = hot_sql.locked_for_submit(item.pk, annotator.pk, key)
    if found is None:
        raise NotAllowed("This item is not assigned to you.")
    annotation, enrollment_status, claim_status, key_item_id = found
    annotation.annotator = annotator  # the caller's object: no query when it is read again
    return annotation, _SubmitChecks(enrollment_status, claim_status, key_item_id)


def _submit_locked(
    annotator: Annotator, item: Item, answer: Any, key: str, now: datetime
) -> SubmitResult:
    """:func:`submit_annotation` inside its transaction."""
    # The item first, then the annotation: the order every writer of both takes
    # (claiming locks the item, then creates the annotation; a reset locks items first).
    # Checks and tutorials are not limited by the overlap: no need to queue their submissions.
    locked_item = item if item.is_per_annotator else hot_sql.locked_item(item.pk)
    annotation, checks = _locked_for_submit(annotator, item, key)
    campaign = annotation.campaign
    if checks.key_item_id not in (None, item.pk):
        raise NotAllowed("This idempotency key was used for another item.")
    # The row's own key is read fresh after the lock wait (the subquery may predate it).
    if key and (checks.key_item_id == item.pk or annotation.idempotency_key == key):
        return SubmitResult(annotation, created=False, replayed=True)
    check_enrollment_status(checks.enrollment_status)
    if not campaign.is_open:
        raise NotAllowed("This campaign is not open; nothing was submitted.")
    cleaned, errors, missing = clean_answer(campaign, item, answer)
    if errors or missing:
        raise AnswerInvalid(errors, missing)
    score, penalty = compute_scores(campaign, cleaned)
    first = not annotation.is_submitted
    annotation.answer = cleaned
    annotation.draft = cleaned
    annotation.score = score
    annotation.mqm_score = penalty
    annotation.time_spent_seconds = _add_activity(annotation, now)
    annotation.last_activity_at = now
    annotation.revision += 1
    # The first key stays: a late retry of the first submission must replay, not revert a
    # later revision. A retried revision re-applies the same answer, which is harmless.
    if key and not annotation.idempotency_key:
        annotation.idempotency_key = key
    if not first:
        hot_sql.save_submission(annotation)
        return SubmitResult(annotation, created=False)
    annotation.status = Annotation.Status.SUBMITTED
    annotation.submitted_at = now
    # A released (lapsed) claim takes its slot back when it submits, even above the overlap:
    # live_slots keeps counting the item's active and submitted claims.
    regained = 0 if checks.claim_status == Assignment.Status.ACTIVE else 1
    hot_sql.save_first_submission(annotation, regained)
    if item.kind != Item.Kind.TUTORIAL:
        # An adaptive campaign checks its goal (and the submitter's QC) once this commits.
        adaptive.check_goal_after_submission(campaign)
    # Read under the item lock for regular items, the only ones that complete.
    if item.kind == Item.Kind.REGULAR and locked_item.completed_count + 1 == campaign.overlap:
        _send_completed_on_commit(locked_item, campaign, regained)
    return SubmitResult(annotation, created=first)


def _send_completed_on_commit(locked_item: Item, campaign: Campaign, regained: int) -> None:
    """Send ``item_completed`` once the submission commits, with the item as it commits: the
    row read under its lock with this submission's counter updates (no query to read it
    again; receivers read ``origin``, ``origin_ref``, ``campaign`` and its annotations)."""
    locked_item.completed_count += 1
    locked_item.live_slots += regained
    locked_item.campaign = campaign
    transaction.on_commit(lambda: item_completed.send(sender=Item, item=locked_item))
