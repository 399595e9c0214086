"""Next-item's statements on its hot path, hand-written once (plain SQL that SQLite and
PostgreSQL both run, parameterised).

Claiming runs these on every request of every annotator: compiled by the ORM, each costs more
Django CPU than the database spends on it (bench/README.md, "Annotation load"). The rules they
implement, and the locks they take, are described where they are used
(``annotation/services.py``, ``next_item_for``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cache

from annotation.models import Annotator, Assignment, Campaign, Enrollment, Item
from config.rows import Columns, db_values, execute, fetch_one, for_update, quote

STREAMED_OVERLAP_MAX = 8
"""Up to this overlap the first open item is found with one ordered index scan per number of
live slots (:func:`first_open_item`); above it, by the ORM's query."""

_ENROLLMENT = Columns(Enrollment, "e")
_CAMPAIGN = Columns(Campaign, "c")
_ANNOTATOR = Columns(Annotator, "a")
_ITEM = Columns(Item, "i")
_LIVE = (Assignment.Status.ACTIVE.value, Assignment.Status.SUBMITTED.value)


def _table(model) -> str:
    return quote(model._meta.db_table)


@cache
def _enrollment_sql(by_user: bool) -> str:
    who = "a.user_id" if by_user else "e.annotator_id"
    return (
        f"SELECT {_ENROLLMENT.sql}, {_CAMPAIGN.sql}, {_ANNOTATOR.sql} "
        f"FROM {_table(Enrollment)} e "
        f"JOIN {_table(Campaign)} c ON c.id = e.campaign_id "
        f"JOIN {_table(Annotator)} a ON a.id = e.annotator_id "
        f"WHERE e.campaign_id = %s AND {who} = %s" + for_update("e")
        # Only the enrollment: the campaign row is read by every claim of the campaign.
    )


def locked_enrollment(
    campaign_id: int, *, user_id: int | None = None, annotator_id: int | None = None
) -> Enrollment | None:
    """The enrollment in the campaign of the annotator (``annotator_id``) or of the annotator
    profile of the user (``user_id``), locked, with its campaign and annotator read in the same
    statement; ``None`` when there is none."""
    by_user = user_id is not None
    who = user_id if by_user else annotator_id
    row = fetch_one(_enrollment_sql(by_user), [campaign_id, who])
    if row is None:
        return None
    enrollment = _ENROLLMENT.instance(row)
    enrollment.campaign = _CAMPAIGN.instance(row, _ENROLLMENT.width)
    enrollment.annotator = _ANNOTATOR.instance(row, _ENROLLMENT.width + _CAMPAIGN.width)
    return enrollment


@cache
def _first_open_sql(overlap: int) -> str:
    """One CTE per stream of candidates: regular items with exactly ``n`` live slots for each
    ``n`` below the overlap, and attention checks. Each is a range of the index on (campaign,
    kind, live_slots, position) read in position order, so its first row is found without
    sorting or even reading the campaign's other items; the earliest of the streams' first rows
    is the campaign's first open item. An ``OR`` of the streams in one ``WHERE`` would make
    PostgreSQL read and sort every open item of the campaign on every claim instead."""
    not_mine = (
        f"NOT EXISTS (SELECT 1 FROM {_table(Assignment)} claim WHERE claim.item_id = i.id "
        f"AND claim.annotator_id = %s AND claim.status IN (%s, %s))"
    )
    locks = for_update(skip_locked=True)
    conditions = ["i.kind = %s AND i.live_slots = %s"] * overlap + ["i.kind = %s"]
    streams = [
        f"s{n} AS (SELECT {_ITEM.sql} FROM {_table(Item)} i "
        f"WHERE i.campaign_id = %s AND {condition} AND {not_mine} "
        f"ORDER BY i.position, i.id LIMIT 1{locks})"
        for n, condition in enumerate(conditions)
    ]
    union = " UNION ALL ".join(f"SELECT * FROM s{n}" for n in range(len(conditions)))
    return (
        f"WITH {', '.join(streams)} "
        f"SELECT * FROM ({union}) candidates ORDER BY candidates.position, candidates.id LIMIT 1"
    )


def first_open_item(campaign: Campaign, annotator_id: int) -> Item | None:
    """The first item in position order with a free slot for the annotator that no other
    transaction holds, locked (``SKIP LOCKED``); for an overlap up to
    :data:`STREAMED_OVERLAP_MAX`.

    Each stream locks its own first row, so besides the item returned, up to one more row per
    stream (an item that comes later) stays locked until the claim commits: others skip it
    meanwhile, as they skip any row a claimer holds.
    """
    params: list[int | str] = []
    for live_slots in range(campaign.overlap):
        params += [campaign.pk, Item.Kind.REGULAR.value, live_slots, annotator_id, *_LIVE]
    params += [campaign.pk, Item.Kind.ATTENTION_CHECK.value, annotator_id, *_LIVE]
    row = fetch_one(_first_open_sql(campaign.overlap), params)
    return None if row is None else _ITEM.instance(row)


@cache
def _take_slot_sql(limited: bool) -> str:
    below = " AND live_slots < %s" if limited else ""
    return f"UPDATE {_table(Item)} SET live_slots = live_slots + 1 WHERE id = %s{below}"


def take_slot(item: Item, overlap: int) -> bool:
    """Count one more live slot on the item, only while it has a free one (per-annotator items
    always have one)."""
    limited = not item.is_per_annotator
    return execute(_take_slot_sql(limited), [item.pk, overlap] if limited else [item.pk]) == 1


_CLAIM_FIELDS = [field for field in Assignment._meta.concrete_fields if not field.primary_key]
_CLAIM_RENEWED = ("campaign", "status", "claimed_at", "expires_at", "updated_at")


@cache
def _claim_sql() -> str:
    columns = ", ".join(quote(field.column) for field in _CLAIM_FIELDS)
    columns_of = {field.name: field.column for field in _CLAIM_FIELDS}
    renewed = ", ".join(
        f"{quote(columns_of[name])} = excluded.{quote(columns_of[name])}" for name in _CLAIM_RENEWED
    )
    return (
        f"INSERT INTO {_table(Assignment)} ({columns}) "
        f"VALUES ({', '.join(['%s'] * len(_CLAIM_FIELDS))}) "
        f"ON CONFLICT (item_id, annotator_id) DO UPDATE SET {renewed}"
    )


def record_claim(item: Item, annotator: Annotator, campaign: Campaign, now: datetime) -> None:
    """Insert the active claim, or reactivate the annotator's expired claim on the item."""
    claim = Assignment(
        item=item,
        annotator=annotator,
        campaign=campaign,
        status=Assignment.Status.ACTIVE,
        claimed_at=now,
        expires_at=now + timedelta(seconds=campaign.claim_ttl_seconds),
    )
    execute(_claim_sql(), db_values(claim, _CLAIM_FIELDS, add=True))
