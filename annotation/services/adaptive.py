"""Adaptive campaigns (issue 42, ADR 0051): the cells a registered assignment policy sees, its
pick among the items next-item may hand out, and the goal check after each submission that
closes the campaign once the goal is settled.

Only human scores count: submitted scores of annotators that quality control has not failed.
When an annotator's verdict turns to fail, their enrollment is paused and their regular items
go back into the pool (their claims expire, the counters come down), so the cells are judged
again by someone who counts; their answers stay in the exports with their verdict.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.db.models import Count, F, Q, Sum
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone

from annotation import assignment, ordering, qc
from annotation.models import Annotation, Assignment, Campaign, Enrollment, Item

RANKED_PICKS = 5
"""Items the policy ranks per request: the next ones are tried when another annotator's
transaction holds the first (``SKIP LOCKED``)."""


def _counted_judgments(campaign: Campaign) -> Q:
    """Submitted human scores of annotators whose judgments still count."""
    counted = Q(annotations__status=Annotation.Status.SUBMITTED, annotations__score__isnull=False)
    excluded = campaign.assignment_state.get("excluded") or []
    return counted & ~Q(annotations__annotator_id__in=excluded) if excluded else counted


def _cell_rows(campaign: Campaign) -> list[dict[str, Any]]:
    """Every regular item with its counted judgments and their score sum: one aggregate query."""
    counted = _counted_judgments(campaign)
    rows = Item.objects.filter(campaign=campaign, kind=Item.Kind.REGULAR)
    if campaign.assignment_prior:
        rows = rows.annotate(prior=KeyTextTransform(campaign.assignment_prior, "meta"))
    fields = ["pk", "system", "doc_id", "seg_id", "position"]
    fields += ["prior"] if campaign.assignment_prior else []
    return list(
        rows.values(*fields)
        .annotate(
            n=Count("annotations", filter=counted), total=Sum("annotations__score", filter=counted)
        )
        .order_by("pk")
    )


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def _cells(campaign: Campaign, rows: Sequence[dict[str, Any]]) -> assignment.Cells:
    return assignment.Cells(
        item_ids=[row["pk"] for row in rows],
        systems=[row["system"] for row in rows],
        segments=[(row["doc_id"], row["seg_id"]) for row in rows],
        judgments=[row["n"] for row in rows],
        score_sums=[row["total"] or 0.0 for row in rows],
        priors=[_number(row.get("prior")) for row in rows],
        cap=campaign.overlap,
    )


def campaign_cells(campaign: Campaign) -> assignment.Cells:
    """The campaign as the policy sees it (pages and tests; next-item reads the rows itself)."""
    return _cells(campaign, _cell_rows(campaign))


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
    candidates: Sequence[tuple[int, str, int]], rows: Sequence[dict[str, Any]], seed: int | None
) -> int | None:
    """The attention check to show now, if one is due.

    In the annotator's order a check comes once the regular items before it are taken. A
    policy takes regular items out of that order, so the check is due once as many regular
    items are taken (no longer open to the annotator) as precede it in the order: the same
    share of the work as before. Only the first open check can be due (later ones have at
    least as many items before them).
    """
    first = next(((pk, pos) for pk, kind, pos in candidates if kind != Item.Kind.REGULAR), None)
    if first is None:
        return None
    regular_keys = sorted(_order_key(row["pk"], row["position"], seed) for row in rows)
    before = bisect.bisect_left(regular_keys, _order_key(first[0], first[1], seed))
    open_regular = sum(1 for _, kind, _ in candidates if kind == Item.Kind.REGULAR)
    return first[0] if len(rows) - open_regular >= before else None


def items_to_try(
    annotator_id: int,
    campaign: Campaign,
    candidates: Sequence[tuple[int, str, int]],
    seed: int | None,
) -> list[int]:
    """Ids to lock, best first, among ``candidates`` (``(id, kind, position)`` of the items
    next-item may hand out now, in the annotator's order): a due attention check, else the
    policy's ranking of the open regular items."""
    rows = _cell_rows(campaign)
    check = _due_check(candidates, rows, seed)
    if check is not None:
        return [check]
    open_regular = [pk for pk, kind, _ in candidates if kind == Item.Kind.REGULAR]
    if not open_regular:
        return []
    cells = _cells(campaign, rows)
    policy_seed = [campaign.item_order_seed, annotator_id, cells.judged]
    policy = assignment.get(campaign.assignment_policy)
    return policy.rank(cells, open_regular, goal_of(campaign), policy_seed, RANKED_PICKS)


# --- after a submission ------------------------------------------------------------------------


def check_goal_after_submission(campaign: Campaign, annotator_id: int) -> None:
    """Run :func:`check_goal` once the submitting transaction commits (adaptive campaigns)."""
    if campaign.is_adaptive:
        transaction.on_commit(lambda: check_goal(campaign.pk, annotator_id))


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


def _excluded_after(campaign: Campaign, annotator_id: int) -> list[int]:
    """The annotators whose judgments count for nothing, with the submitter's verdict read
    now (the only one this submission changed); a failed annotator stays excluded."""
    excluded = list(campaign.assignment_state.get("excluded") or [])
    if annotator_id in excluded:
        return excluded
    enrollment = Enrollment.objects.select_related("campaign").filter(
        campaign=campaign, annotator_id=annotator_id
    )
    found = enrollment.first()
    if found is not None and qc.verdict_for(found) == qc.FAIL:
        _return_cells(campaign, annotator_id)
        excluded.append(annotator_id)
    return excluded


def _budget(campaign: Campaign) -> dict[str, int]:
    """Judgments spent (every submitted regular answer, counted or not) against the full
    crossing that a campaign without a policy spends: every regular item at its overlap."""
    regular = Item.objects.filter(campaign=campaign, kind=Item.Kind.REGULAR)
    spent = Annotation.objects.filter(
        campaign=campaign, status=Annotation.Status.SUBMITTED, item__kind=Item.Kind.REGULAR
    ).count()
    full = regular.count() * campaign.overlap
    return {"spent": spent, "full": full, "saved": max(full - spent, 0)}


def check_goal(campaign_id: int, annotator_id: int) -> assignment.GoalReport | None:
    """Check the campaign's goal on the counted judgments; close the campaign once settled.

    The campaign row is locked for the check, so concurrent submissions check one after the
    other and the history of checks (the stopping rule's patience) loses none.
    """
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().filter(pk=campaign_id).first()
        if campaign is None or not campaign.is_adaptive or not campaign.is_open:
            return None
        state = dict(campaign.assignment_state)
        state["excluded"] = _excluded_after(campaign, annotator_id)
        campaign.assignment_state = state
        cells = campaign_cells(campaign)
        policy = assignment.get(campaign.assignment_policy)
        seed = [campaign.item_order_seed, cells.judged]
        report = policy.check(cells, goal_of(campaign), state.get("history") or [], seed)
        state.update(
            history=report.history,
            systems=report.systems,
            counted=cells.judged,
            checked_at=timezone.now().isoformat(),
            **_budget(campaign),
        )
        if report.settled:
            state["stopped_at"] = state["checked_at"]
            campaign.status = Campaign.Status.CLOSED
        campaign.save(update_fields=["assignment_state", "status", "updated_at"])
    return report
