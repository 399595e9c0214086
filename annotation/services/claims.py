"""Claiming the next item: resume a held claim, the tutorial phase, the quota, then one open
item locked with ``SKIP LOCKED`` and claimed with its draft (``annotation.hot_sql``); lapsed
claims give their slots back.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import (
    BigIntegerField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Value,
)
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone

from annotation import hot_sql, ordering, qc
from annotation.models import Annotation, Annotator, Assignment, Campaign, Enrollment, Item
from annotation.refusals import EnrollmentBlocked, NotAllowed, NotEnrolled
from annotation.services import adaptive

_CANDIDATE_BATCH = 50
_LOCKED_RETRIES = 12


def _lock(queryset):
    """Row locks that skip rows another transaction holds (PostgreSQL); SQLite serializes
    writers with BEGIN IMMEDIATE instead, so the plain query is already safe there."""
    if connection.features.has_select_for_update_skip_locked:
        return queryset.select_for_update(skip_locked=True)
    return queryset


def _live_claims():
    return Q(status=Assignment.Status.ACTIVE) | Q(status=Assignment.Status.SUBMITTED)


def recount_live_slots(item_ids: Iterable[int]) -> None:
    """Set the items' ``live_slots`` from their claims; callers hold the items' row locks."""
    live = (
        Assignment.objects.filter(_live_claims(), item=OuterRef("pk"))
        .order_by()
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")
    )
    Item.objects.filter(pk__in=list(item_ids)).update(
        live_slots=Coalesce(Subquery(live, output_field=IntegerField()), Value(0))
    )


def _release_lapsed(item_ids: list[int], now: datetime, keep: Annotator | None = None) -> int:
    """Release lapsed claims on these items (locked by the caller) and recount their slots;
    ``keep``'s own claim is left for it to resume. Returns how many claims were released."""
    lapsed = Assignment.objects.filter(
        item_id__in=item_ids, status=Assignment.Status.ACTIVE, expires_at__lte=now
    )
    if keep is not None:
        lapsed = lapsed.exclude(annotator=keep)
    released = lapsed.update(status=Assignment.Status.EXPIRED)
    if released:
        recount_live_slots(item_ids)
    return released


def _release_lapsed_in_campaign(campaign: Campaign, now: datetime) -> int:
    """Free the slots of other annotators' lapsed claims on regular items of the campaign.

    Run only when no item is open, so an annotator who comes back before their slot is needed
    resumes it. Items another transaction holds are left for a later call.
    """
    lapsed_items = Assignment.objects.filter(
        campaign=campaign,
        status=Assignment.Status.ACTIVE,
        expires_at__lte=now,
        item__kind=Item.Kind.REGULAR,
    ).values("item_id")
    item_ids = list(
        _lock(Item.objects.filter(pk__in=lapsed_items).order_by("pk")).values_list("pk", flat=True)[
            :_CANDIDATE_BATCH
        ]
    )
    return _release_lapsed(item_ids, now) if item_ids else 0


def _initial_draft(item: Item) -> dict[str, Any]:
    if item.prefill_spans:
        return {"spans": [dict(span) for span in item.prefill_spans], "prefilled": True}
    return {}


@dataclass(frozen=True)
class Claim:
    """An item given to an annotator by next-item, with its annotation row when this claim
    created it (``None``: the row predates it, a kept draft or a resumed claim)."""

    item: Item
    annotator: Annotator
    new_annotation: Annotation | None = None


def _claim(annotator: Annotator, item: Item, campaign: Campaign, now: datetime) -> Claim | None:
    """Count the item's slot, only while one is free (``live_slots``; the caller holds the row
    lock, the condition guards the counter anyway), and record the claim and its draft; ``None``
    when the slot was gone (nothing changed).

    One upsert each: an expired claim of the same annotator on the item is reactivated, and an
    existing annotation (a draft kept from that claim) is left as it is.
    """
    option_order: list[int] = []
    if campaign.get_protocol().has_options:
        # Seeded by (annotator, item) so a reset annotator sees the same order again.
        option_order = list(range(len(item.choices)))
        random.Random(f"{annotator.pk}:{item.pk}").shuffle(option_order)
    draft = Annotation(
        item=item,
        annotator=annotator,
        campaign=campaign,
        draft=_initial_draft(item),
        option_order=option_order,
        last_activity_at=now,
    )
    inserted = hot_sql.claim_with_draft(item, draft, campaign.overlap, now)
    if inserted is None:
        return None
    return Claim(item, annotator, draft if inserted else None)


_ENROLLMENT_REFUSALS: dict[str, str] = {
    Enrollment.Status.PENDING: "Your sign-up is waiting for approval.",
    Enrollment.Status.PAUSED: "Your work on this campaign is paused by the organisers.",
    Enrollment.Status.REJECTED: "You cannot take part in this campaign.",
}


def check_enrollment(enrollment: Enrollment | None) -> None:
    """Raise :class:`EnrollmentBlocked` unless the enrollment is approved."""
    check_enrollment_status(None if enrollment is None else enrollment.status)


def check_enrollment_status(status: str | None) -> None:
    if status is None:
        raise NotEnrolled("You are not enrolled in this campaign.")
    refusal = _ENROLLMENT_REFUSALS.get(status)
    if refusal:
        raise EnrollmentBlocked(refusal)


def _approved_enrollment(
    campaign_id: int, user_id: int | None, annotator_id: int | None, campaign: Campaign | None
) -> Enrollment:
    """The enrollment of the annotator (or of the user's annotator profile) in the campaign,
    locked by the query that reads it with its campaign and annotator; refused unless it is
    approved and its campaign (``campaign``, or the one read with it) is open."""
    enrollment = hot_sql.locked_enrollment(campaign_id, user_id=user_id, annotator_id=annotator_id)
    check_enrollment(enrollment)
    assert enrollment is not None  # check_enrollment refused a missing one
    if (campaign or enrollment.campaign).status != Campaign.Status.OPEN:
        raise NotAllowed("This campaign is not open for annotation.")
    return enrollment


def _resume(annotator: Annotator, campaign: Campaign, now: datetime) -> Item | None:
    open_claims = Assignment.objects.filter(
        campaign=campaign, annotator=annotator, status=Assignment.Status.ACTIVE
    ).select_related("item")
    renewed = now + timedelta(seconds=campaign.claim_ttl_seconds)
    for assignment in open_claims.order_by("claimed_at", "id"):
        item = assignment.item
        if assignment.expires_at > now or item.is_per_annotator:
            Assignment.objects.filter(pk=assignment.pk).update(expires_at=renewed)
            return item
        # The claim lapsed: keep it only if the slot is still free. The item lock is waited
        # for (one row, held for one claim) so that the counter and the claim change together.
        locked = Item.objects.select_for_update().get(pk=item.pk)
        _release_lapsed([item.pk], now, keep=annotator)
        locked.refresh_from_db(fields=["live_slots"])
        still_mine = Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.ACTIVE)
        # live_slots counts this claim too.
        if locked.live_slots <= campaign.overlap:
            if still_mine.update(expires_at=renewed):
                return item
            continue
        if still_mine.update(status=Assignment.Status.EXPIRED):
            Item.objects.filter(pk=item.pk).update(live_slots=F("live_slots") - 1)
    return None


def _claims_and_tutorial(annotator: Annotator, campaign: Campaign) -> tuple[bool, int | None]:
    """(whether the annotator holds an active claim in the campaign, the id of the first
    tutorial item they have never claimed), in one statement: most requests have neither, and
    then need no further query for them. Read after the enrollment is locked, so both are
    current: claims of theirs are created (and deleted, by a reset) only under that lock;
    others may release an active one meanwhile, which :func:`_resume` checks again.

    Hand-written (:mod:`annotation.hot_sql`): the ORM would compile these two nested
    subqueries again on every request, which cost more CPU than any other statement of
    next-item (bench/README.md, "Annotation load").
    """
    return hot_sql.claims_and_tutorial(annotator.pk, campaign.pk)


def _tutorial_phase(
    annotator: Annotator,
    campaign: Campaign,
    enrollment: Enrollment,
    now: datetime,
    pending_id: int | None,
) -> tuple[bool, Claim | None, str]:
    """(still in tutorial phase, claim, refusal). Tutorials come first (``pending_id``, the
    first one not claimed yet); passing them may be required. A refusal is returned, not
    raised, so that the rejection it records commits."""
    if pending_id is not None:
        pending = Item.objects.get(pk=pending_id)
        # A tutorial is per annotator: it always has a slot.
        return True, _claim(annotator, pending, campaign, now), ""
    if campaign.require_qualification and not enrollment.qualified:
        outcome = qc.qualification_result(enrollment)
        if outcome is None:
            return (
                True,
                None,
                ("This campaign needs a qualification; the organisers will review your work."),
            )
        enrollment.qualified = outcome
        if not outcome:
            enrollment.status = Enrollment.Status.REJECTED
        enrollment.save(update_fields=["qualified", "status", "updated_at"])
        if not outcome:
            return True, None, "You did not pass the qualification for this campaign."
    return False, None, ""


def _reached_quota(annotator: Annotator, campaign: Campaign) -> bool:
    if not campaign.max_items_per_annotator:
        return False
    taken = (
        Assignment.objects.filter(campaign=campaign, annotator=annotator)
        .exclude(item__kind=Item.Kind.TUTORIAL)
        .filter(status__in=[Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED])
        .count()
    )
    return taken >= campaign.max_items_per_annotator


def next_item_for(annotator: Annotator, campaign: Campaign, *, now=None) -> Item | None:
    """Claim (or resume) the annotator's next item in a campaign; ``None`` when they are done.

    Concurrency-safe (STYLE 10):

    1. The annotator's enrollment row is locked, so one annotator's parallel requests queue.
    2. An open claim of theirs is resumed first (renewed if it lapsed and the slot is free).
    3. Tutorials come first; with ``require_qualification`` they must be passed.
    4. Candidates are items they have no live claim on, in position order (or, when the
       campaign shuffles items, in the annotator's seeded permutation: ``annotation/ordering.py``,
       computed inside the same query); regular items need
       ``live_slots < overlap`` (active + submitted claims, a counter on the item). The first
       candidate row nobody else holds is locked (``FOR UPDATE SKIP LOCKED``) and its counter
       raised only while below the overlap, so two annotators never take the last slot twice
       and the work does not grow with the number of annotators. Lapsed claims of others are
       released when nothing else is open (see :func:`_claim_open_item`).
    5. The claim is an ``Assignment`` (unique per item and annotator) expiring after the
       campaign's ``claim_ttl_seconds`` unless activity renews it; the annotation row (the draft)
       is created with it, choice options shuffled and the order recorded.

    Returns ``None`` when nothing is left for the annotator — then ``enrollment.finished_at``
    is set — or when the remaining slots are all held by other annotators' live claims (then it
    is not set: try again later). Raises :class:`NotAllowed` when the enrollment or campaign
    does not allow annotating.
    """
    claim = _next_claim(campaign.pk, now or timezone.now(), annotator=annotator, campaign=campaign)
    return None if claim is None else claim.item


def next_claim(campaign_id: int, user_id: int, *, now=None) -> Claim | None:
    """:func:`next_item_for` for the user's own enrollment in the campaign (its annotator
    matched through the user, ``access.own_enrollment_key``), read with its campaign and
    annotator by the query that locks it; raises :class:`NotEnrolled` when there is none. The
    claim carries the annotation row when it created it (else read it:
    :func:`claimed_annotation`)."""
    return _next_claim(campaign_id, now or timezone.now(), user_id=user_id)


def claimed_annotation(claim: Claim) -> Annotation:
    """The annotation row of a claimed item: the one the claim created, else read (a draft
    kept from an earlier claim, a resumed claim)."""
    if claim.new_annotation is not None:
        return claim.new_annotation
    return Annotation.objects.get(item=claim.item, annotator=claim.annotator)


def _next_claim(
    campaign_id: int,
    now: datetime,
    *,
    user_id: int | None = None,
    annotator: Annotator | None = None,
    campaign: Campaign | None = None,
) -> Claim | None:
    """:func:`next_item_for` for the enrollment of the user's annotator profile (``user_id``)
    or of ``annotator``; ``annotator`` and ``campaign`` are the caller's objects, else the
    ones read with the enrollment."""
    with transaction.atomic():
        enrollment = _approved_enrollment(
            campaign_id, user_id, None if annotator is None else annotator.pk, campaign
        )
        claim, refusal = _claim_next(
            annotator or enrollment.annotator, campaign or enrollment.campaign, enrollment, now
        )
    if refusal:
        raise NotAllowed(refusal)
    return claim


def _claim_next(
    annotator: Annotator, campaign: Campaign, enrollment: Enrollment, now: datetime
) -> tuple[Claim | None, str]:
    """The body of :func:`next_item_for` under the enrollment lock: (claim, refusal)."""
    has_claim, tutorial_id = _claims_and_tutorial(annotator, campaign)
    if has_claim:
        resumed = _resume(annotator, campaign, now)
        if resumed is not None:
            return Claim(resumed, annotator), ""
    in_tutorial, claim, refusal = _tutorial_phase(annotator, campaign, enrollment, now, tutorial_id)
    if in_tutorial:
        return claim, refusal
    if not _reached_quota(annotator, campaign):
        seed = order_seed(enrollment, campaign)
        claim = _claim_open_item(annotator, campaign, now, seed)
        if claim is not None:
            return claim, ""
        if _unfinished(annotator, campaign).exists():
            # Items are left but others hold their last slots: not finished, try later.
            return None, ""
    if enrollment.finished_at is None:
        Enrollment.objects.filter(pk=enrollment.pk).update(finished_at=now)
    return None, ""


def _claimed_by(annotator: Annotator) -> Exists:
    """The item has a live claim of this annotator (they never get an item twice)."""
    return Exists(
        Assignment.objects.filter(
            item=OuterRef("pk"),
            annotator=annotator,
            status__in=[Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED],
        )
    )


def _not_claimed_below_overlap(annotator: Annotator, campaign: Campaign, counter: str):
    """Attention checks, and regular items whose ``counter`` is below the overlap, that the
    annotator has not claimed."""
    return (
        Item.objects.filter(campaign=campaign)
        .filter(_below_overlap(campaign, counter))
        .exclude(_claimed_by(annotator))
    )


def _below_overlap(campaign: Campaign, counter: str) -> Q:
    """Attention checks, and regular items whose ``counter`` is below the overlap."""
    return Q(kind=Item.Kind.REGULAR, **{f"{counter}__lt": campaign.overlap}) | Q(
        kind=Item.Kind.ATTENTION_CHECK
    )


def _unfinished(annotator: Annotator, campaign: Campaign):
    """Items the annotator could still get once others' claims are submitted or released."""
    return _not_claimed_below_overlap(annotator, campaign, "completed_count")


def _rank_expression(seed: int) -> ExpressionWrapper:
    """``ordering.item_rank(id, seed)`` in SQL (SQLite and PostgreSQL); see annotation/ordering.py.
    The id is cast to a 64-bit integer so no step overflows a 32-bit column type."""
    s1, a, s2, b = ordering.hash_params(seed)
    prime = ordering.PRIME
    x = (Cast("id", BigIntegerField()) % prime).bitxor(s1) * a % prime
    return ExpressionWrapper(x.bitxor(s2) * b % prime, output_field=BigIntegerField())


def item_order(seed: int | None) -> tuple[Any, ...]:
    """The ``order_by`` of an annotator's items: position, or their permutation (shuffle on)."""
    if seed is None:
        return ("position", "id")
    return (_rank_expression(seed), "position", "id")


def _open(annotator: Annotator, campaign: Campaign, seed: int | None = None):
    """Items with a free slot for the annotator now, in their order (:func:`item_order`)."""
    return _not_claimed_below_overlap(annotator, campaign, "live_slots").order_by(*item_order(seed))


def order_seed(enrollment: Enrollment, campaign: Campaign) -> int | None:
    """The annotator's item-order seed when the campaign shuffles items (``None`` otherwise),
    derived from (campaign seed, annotator) on first use and stored on the enrollment."""
    if not campaign.shuffle_items:
        return None
    if enrollment.item_order_seed is None:
        seed = ordering.annotator_seed(campaign.item_order_seed, enrollment.annotator_id)
        Enrollment.objects.filter(pk=enrollment.pk, item_order_seed__isnull=True).update(
            item_order_seed=seed
        )
        enrollment.refresh_from_db(fields=["item_order_seed"])
    return enrollment.item_order_seed


def _claim_open_item(
    annotator: Annotator, campaign: Campaign, now: datetime, seed: int | None = None
) -> Claim | None:
    """Claim the first open item in the annotator's order: one locking query and one
    conditional counter update, whatever the number of annotators.

    1. The first open item that no other transaction holds is locked
       (``SELECT ... LIMIT 1 FOR UPDATE SKIP LOCKED``): claimers never wait for each other and
       a transaction holds only the row it claims.
    2. Its ``live_slots`` goes up by one only while below the overlap.
    3. When nothing is open, other annotators' lapsed claims are released and (if any were)
       the claim is tried again. When open items exist but others hold all their rows for a
       moment, it is retried briefly (20–240 ms) rather than blocking: READ COMMITTED sees
       their commits.
    """
    for attempt in range(_LOCKED_RETRIES + 1):
        item = _first_open_item(annotator, campaign, seed)
        if item is not None:
            claim = _claim(annotator, item, campaign, now)
            if claim is not None:
                return claim
        elif _release_lapsed_in_campaign(campaign, now):
            continue
        elif not (
            connection.features.has_select_for_update_skip_locked
            and _open(annotator, campaign).exists()
        ):
            return None
        time.sleep(0.02 * (attempt + 1))
    return None


def _first_open_item(annotator: Annotator, campaign: Campaign, seed: int | None) -> Item | None:
    """The first open item in the annotator's order that no other transaction holds, locked.
    In position order with a small overlap (nearly every campaign), one ordered index scan per
    stream of candidates (``hot_sql.first_open_item``); in a shuffled order, or with a large
    overlap, the ORM's query, which reads and sorts all the campaign's open items."""
    if campaign.is_adaptive:
        return _policy_open_item(annotator, campaign, seed)
    if seed is None and campaign.overlap <= hot_sql.STREAMED_OVERLAP_MAX:
        return hot_sql.first_open_item(campaign, annotator.pk)
    return _lock(_open(annotator, campaign, seed)).first()


def _policy_open_item(annotator: Annotator, campaign: Campaign, seed: int | None) -> Item | None:
    """The open item the campaign's assignment policy ranks first among those no other
    transaction holds, locked.

    The candidates are today's (:func:`_not_claimed_below_overlap`), read as one statement of
    two index scans (regular items at the overlap; the annotator's live claims); the policy
    only chooses among them (``services/adaptive.items_to_try``), and each pick is locked with
    the same conditions as the ordered path, so a slot taken meanwhile is never taken twice.
    """
    mine = (
        Assignment.objects.filter(campaign=campaign, annotator=annotator)
        .filter(_live_claims())
        .values_list("item_id", flat=True)
    )
    # The full ones rather than the open ones: an adaptive campaign stops early, so they are
    # the fewer rows to read.
    full = Item.objects.filter(
        campaign=campaign, kind=Item.Kind.REGULAR, live_slots__gte=campaign.overlap
    ).values_list("pk", flat=True)
    unavailable = set(full.order_by().union(mine.order_by(), all=True))
    for pk in adaptive.items_to_try(annotator.pk, campaign, unavailable, seed):
        # By id alone: with the campaign in the query SQLite scans the campaign's items.
        still_open = Item.objects.filter(_below_overlap(campaign, "live_slots"), pk=pk)
        item = _lock(still_open.exclude(_claimed_by(annotator))).first()
        if item is not None:
            return item
    return None
