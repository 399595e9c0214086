"""Adaptive campaigns (issue 42, ADR 0051): the cells a registered assignment policy sees, its
pick among the items next-item may hand out, and the goal check after each submission that
closes the campaign once the goal is settled.

Only human scores count: submitted scores of annotators that quality control has not failed.
When an annotator's verdict turns to fail, their enrollment is paused and their regular items
go back into the pool (their claims expire, the counters come down), so the cells are judged
again by someone who counts; their answers stay in the exports with their verdict.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np
from django.db import transaction
from django.db.models import Count, F, Max, Q, Sum
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone

from annotation import assignment, ordering, qc
from annotation.models import Annotation, Assignment, Campaign, Enrollment, Item

RANKED_PICKS = 5
"""Items the policy ranks per request: the next ones are tried when another annotator's
transaction holds the first (``SKIP LOCKED``)."""

_KEPT = 64
T = TypeVar("T")
CHECKS_PER_CAMPAIGN = 100


@dataclass(frozen=True)
class _CampaignItems:
    """What next-item needs of a campaign's items that judgments do not change: the regular
    items (ids ascending) as cells, the attention checks, and everyone's place in the order."""

    cells: assignment.Cells  # with no judgment
    positions: dict[int, int]  # regular items and checks
    checks: list[int]


_items_cache: dict[tuple[Any, ...], _CampaignItems] = {}
_cells_cache: dict[tuple[Any, ...], assignment.Cells] = {}


def _campaign_items(campaign: Campaign) -> _CampaignItems:
    """The campaign's items, read once per process while they stay the same (the same last
    id: items are only ever added, by imports, or deleted with their campaign), so that
    next-item reads only what changes with every judgment. Keyed by what the cells are made
    of too: the overlap (each cell's cap) and the prior's key."""
    # Max reads the campaign's entries of a covering index; ORDER BY id DESC LIMIT 1 sorts them.
    last = Item.objects.filter(campaign=campaign).aggregate(last=Max("pk"))["last"]
    key = (campaign.pk, campaign.created_at, campaign.overlap, campaign.assignment_prior, last)
    return _kept(_items_cache, key, lambda: _read_items(campaign))


def _kept(cache: dict[tuple[Any, ...], T], key: tuple[Any, ...], read: Callable[[], T]) -> T:
    """``cache[key]``, read on a miss; a full cache starts again (a few campaigns are live)."""
    if key not in cache:
        if len(cache) >= _KEPT:
            cache.clear()
        cache[key] = read()
    return cache[key]


def _read_items(campaign: Campaign) -> _CampaignItems:
    items = Item.objects.filter(campaign=campaign).exclude(kind=Item.Kind.TUTORIAL)
    prior_key = campaign.assignment_prior
    if prior_key:
        items = items.annotate(prior=KeyTextTransform(prior_key, "meta"))
    fields = ["pk", "kind", "system", "doc_id", "seg_id", "position"]
    rows = list(items.order_by("pk").values_list(*fields, "prior" if prior_key else "pk"))
    regular = [row for row in rows if row[1] == Item.Kind.REGULAR]
    systems = sorted({row[2] for row in regular})
    segments = sorted({(row[3], row[4]) for row in regular})
    system_index = {name: i for i, name in enumerate(systems)}
    segment_index = {segment: i for i, segment in enumerate(segments)}
    n = len(regular)
    cells = assignment.Cells(
        item_ids=np.array([row[0] for row in regular], dtype=np.int64),
        system_of=np.array([system_index[row[2]] for row in regular], dtype=np.intp),
        segment_of=np.array([segment_index[(row[3], row[4])] for row in regular], dtype=np.intp),
        systems=systems,
        segments=segments,
        judgments=np.zeros(n, dtype=np.intp),
        score_sums=np.zeros(n),
        priors=np.array([_number(row[6]) if prior_key else math.nan for row in regular]),
        cap=campaign.overlap,
    )
    checks = [row[0] for row in rows if row[1] != Item.Kind.REGULAR]
    return _CampaignItems(cells, {row[0]: row[5] for row in rows}, checks)


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number if math.isfinite(number) else math.nan


def _cells(campaign: Campaign, items: _CampaignItems) -> assignment.Cells:
    """The cells with the judgments that count: one aggregate over the campaign's submitted
    scores (its export index), a count and a sum per judged item."""
    scores = Annotation.objects.filter(
        campaign=campaign, status=Annotation.Status.SUBMITTED, score__isnull=False
    )
    excluded = campaign.assignment_state.get("excluded") or []
    if excluded:
        scores = scores.exclude(annotator_id__in=excluded)
    per_item = scores.values("item_id").annotate(n=Count("pk"), total=Sum("score")).order_by()
    judged = np.array(list(per_item.values_list("item_id", "n", "total")), dtype=np.float64)
    judged = judged.reshape(-1, 3)
    # Each judged regular item (checks' scores are not cells): its index in the sorted ids.
    ids = items.cells.item_ids
    judged_ids = judged[:, 0].astype(np.int64)
    where = np.searchsorted(ids, judged_ids)
    found = where < len(ids)
    found[found] = ids[where[found]] == judged_ids[found]
    judgments = np.zeros(len(ids), dtype=np.intp)
    score_sums = np.zeros(len(ids))
    judgments[where[found]] = judged[found, 1]
    score_sums[where[found]] = judged[found, 2]
    return replace(items.cells, judgments=judgments, score_sums=score_sums)


def campaign_cells(campaign: Campaign) -> assignment.Cells:
    """The campaign as its policy sees it."""
    return _cells(campaign, _campaign_items(campaign))


def _cells_as_last_checked(campaign: Campaign, items: _CampaignItems) -> assignment.Cells:
    """The cells as the last goal check counted them (read once per process and check: each
    check saves the campaign, so ``updated_at`` moves). The policy ranks on them; what may be
    handed out is read fresh on every request, so a cell taken since is never offered."""
    key = (campaign.pk, campaign.updated_at, items.cells.item_ids.size)
    return _kept(_cells_cache, key, lambda: _cells(campaign, items))


def goal_of(campaign: Campaign) -> assignment.Goal:
    return assignment.Goal(
        campaign.assignment_goal, campaign.assignment_alpha, campaign.assignment_tolerance
    )


def _order_key(item_id: int, position: int, seed: int | None) -> tuple[int, ...]:
    """The item's place in the annotator's order, as the claim query sorts (claims.item_order)."""
    if seed is None:
        return (position, item_id)
    return (ordering.item_rank(item_id, seed), position, item_id)


def _due_check(
    items: _CampaignItems,
    open_regular: Sequence[int],
    unavailable: Collection[int],
    seed: int | None,
) -> int | None:
    """The attention check to show now, if one is due.

    In the annotator's order a check comes once the regular items before it are taken. A
    policy takes regular items out of that order, so the check is due once as many regular
    items are taken (no longer open to the annotator) as precede it in the order: the same
    share of the work as before. Only the first open check can be due (later ones have at
    least as many items before them).
    """
    open_checks = [pk for pk in items.checks if pk not in unavailable]
    if not open_checks:
        return None
    check = min(open_checks, key=lambda pk: _order_key(pk, items.positions[pk], seed))
    key = _order_key(check, items.positions[check], seed)
    regular = items.cells.item_ids.tolist()
    before = sum(1 for pk in regular if _order_key(pk, items.positions[pk], seed) < key)
    return check if len(regular) - len(open_regular) >= before else None


def items_to_try(
    annotator_id: int, campaign: Campaign, unavailable: Collection[int], seed: int | None
) -> list[int]:
    """Ids to lock, best first: a due attention check, else the policy's ranking of the
    regular items next-item may hand out now. ``unavailable``: the regular items at the
    overlap and the items the annotator holds a claim on (checks have no overlap, so the
    checks among them are the annotator's)."""
    items = _campaign_items(campaign)
    ids = items.cells.item_ids
    taken = np.fromiter(unavailable, dtype=np.int64, count=len(unavailable))
    open_regular = ids[~np.isin(ids, taken)].tolist()
    check = _due_check(items, open_regular, unavailable, seed)
    if check is not None:
        return [check]
    if not open_regular:
        return []
    cells = _cells_as_last_checked(campaign, items)
    policy_seed = [campaign.item_order_seed, annotator_id, len(open_regular)]
    policy = assignment.get(campaign.assignment_policy)
    return policy.rank(cells, open_regular, goal_of(campaign), policy_seed, RANKED_PICKS)


# --- after a submission ------------------------------------------------------------------------


def check_goal_after_submission(campaign: Campaign) -> None:
    """Run :func:`check_goal` once the submitting transaction commits (adaptive campaigns)."""
    if campaign.is_adaptive:
        transaction.on_commit(lambda: check_goal(campaign.pk))


def _return_cells(campaign: Campaign, annotator_id: int) -> int:
    """Pause a failed annotator and put their regular items back into the pool; returns how
    many items were returned. Items are locked in id order, as every multi-row lock here."""
    Enrollment.objects.filter(campaign=campaign, annotator_id=annotator_id).update(
        status=Enrollment.Status.PAUSED
    )
    claims = Assignment.objects.filter(
        campaign=campaign,
        annotator_id=annotator_id,
        status=Assignment.Status.SUBMITTED,
        item__kind=Item.Kind.REGULAR,
    )
    item_ids = sorted(claims.values_list("item_id", flat=True))
    list(Item.objects.select_for_update().filter(pk__in=item_ids).order_by("pk").values_list("pk"))
    claims.update(status=Assignment.Status.EXPIRED)
    Item.objects.filter(pk__in=item_ids, completed_count__gt=0).update(
        completed_count=F("completed_count") - 1, live_slots=F("live_slots") - 1
    )
    return len(item_ids)


def _excluded_now(campaign: Campaign) -> list[int]:
    """The annotators whose judgments count for nothing: those failed before, and those whose
    quality-control verdict is fail now (their items go back into the pool)."""
    excluded = list(campaign.assignment_state.get("excluded") or [])
    for annotator_id, verdict in qc.verdicts_for_campaign(campaign).items():
        if verdict == qc.FAIL and annotator_id not in excluded:
            _return_cells(campaign, annotator_id)
            excluded.append(annotator_id)
    return excluded


def _submitted(campaign: Campaign) -> int:
    """The campaign's submitted annotations, tutorials' too: a count on its export index,
    without the join to the items that :func:`_answers` needs."""
    return Annotation.objects.filter(campaign=campaign, status=Annotation.Status.SUBMITTED).count()


def _answers(campaign: Campaign) -> tuple[int, int]:
    """(submitted answers to regular items and checks, of which regular: the judgments spent,
    counted or not), in one query."""
    submitted = Annotation.objects.filter(
        campaign=campaign, status=Annotation.Status.SUBMITTED
    ).exclude(item__kind=Item.Kind.TUTORIAL)
    counts = submitted.aggregate(
        answers=Count("pk"), spent=Count("pk", filter=Q(item__kind=Item.Kind.REGULAR))
    )
    return counts["answers"], counts["spent"]


def _check_stride(n_cells: int) -> int:
    """New judgments between two goal checks: every one on a small campaign; on a large grid
    the check (quality control of every annotator, a permutation test over the grid) runs
    about CHECKS_PER_CAMPAIGN times in all."""
    return max(1, n_cells // CHECKS_PER_CAMPAIGN)


def check_goal(campaign_id: int) -> assignment.GoalReport | None:
    """Check the campaign's goal on the counted judgments; close the campaign once settled.

    The campaign row is locked for the check (``FOR NO KEY UPDATE``: claims, which insert rows
    pointing to it, go on), so concurrent submissions check one after the other and the
    history of checks (the stopping rule's patience) loses none. ``None`` when no check was
    due. The budget saved is estimated against the full crossing, every regular item at its
    overlap: what the same campaign spends in order, to the end.
    """
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update(no_key=True).filter(pk=campaign_id).first()
        if campaign is None or not campaign.is_adaptive or not campaign.is_open:
            return None
        state = dict(campaign.assignment_state)
        items = _campaign_items(campaign)
        n_cells = len(items.cells.item_ids)
        stride = _check_stride(n_cells)
        # Answers are never taken back: fewer new submissions of any kind than the stride
        # means fewer new answers, so the count with the join is read only when a check may
        # be due. Read first, so the count kept never includes an answer that ``answers`` has
        # not counted.
        submitted = _submitted(campaign)
        if submitted - state.get("submitted", 0) < stride:
            return None
        answers, spent = _answers(campaign)
        if answers - state.get("answers", 0) < stride:
            return None
        # Quality control too, with the goal: it reads every annotator's work.
        state["excluded"] = _excluded_now(campaign)
        campaign.assignment_state = state
        cells = _cells(campaign, items)
        policy = assignment.get(campaign.assignment_policy)
        seed = [campaign.item_order_seed, cells.judged]
        report = policy.check(cells, goal_of(campaign), state.get("history") or [], seed)
        full = n_cells * campaign.overlap
        state.update(
            history=report.history, systems=report.systems, counted=cells.judged,
            checked_at=timezone.now().isoformat(), submitted=submitted, answers=answers,
            spent=spent, full=full, saved=max(full - spent, 0),
        )  # fmt: skip
        if report.settled:
            state["stopped_at"] = state["checked_at"]
            campaign.status = Campaign.Status.CLOSED
        campaign.save(update_fields=["assignment_state", "status", "updated_at"])
    return report
