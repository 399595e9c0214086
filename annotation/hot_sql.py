"""The statements of next-item and submit, hand-written once (plain SQL that SQLite and
PostgreSQL both run, parameterised; ADR 0036), with code constants written in so that prepared
statements get good generic plans (ADR 0039).

Every annotator runs these on every request: compiled by the ORM, each costs more Django CPU
than the database spends on it (bench/README.md, "Annotation load"). The rules they implement,
and the locks they take, are described where they are used (``annotation/services/``:
``claims.next_item_for`` and ``submissions.submit_annotation``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cache

from django.db import connection

from annotation.models import Annotation, Annotator, Assignment, Campaign, Enrollment, Item
from core.rows import Columns, db_values, execute, fetch_one, for_update, quote

STREAMED_OVERLAP_MAX = 8
"""Up to this overlap the first open item is found with one ordered index scan per number of
live slots (:func:`first_open_item`); above it, by the ORM's query."""

_ENROLLMENT = Columns(Enrollment, "e")
_CAMPAIGN = Columns(Campaign, "c")
_ANNOTATOR = Columns(Annotator, "a")
_ITEM = Columns(Item, "i")


def _table(model) -> str:
    return quote(model._meta.db_table)


def _constant(choice: str) -> str:
    """A choice of the code (a kind, a status) written into the statement, not bound.

    Statements run prepared after their fifth time on a connection, with a generic plan: one
    made without the parameters' values. Bound, a kind or status is an unknown value to that
    plan, which then expects the average row count of any kind (thousands of regular items
    where the campaign has no tutorial) and plans a scan instead of an index lookup. Written in,
    the planner uses its statistics for that very value. Only code constants go here.
    """
    assert choice.isidentifier(), choice  # nothing that would need quoting
    return f"'{choice}'"


_LIVE = f"({_constant(Assignment.Status.ACTIVE)}, {_constant(Assignment.Status.SUBMITTED)})"


@cache
def _enrollment_sql(by_user: bool) -> str:
    who = "a.user_id" if by_user else "e.annotator_id"
    # Only the enrollment is locked: the campaign row is read by every claim of the campaign.
    lock = for_update("e")
    return (
        f"SELECT {_ENROLLMENT.sql}, {_CAMPAIGN.sql}, {_ANNOTATOR.sql} "
        f"FROM {_table(Enrollment)} e "
        f"JOIN {_table(Campaign)} c ON c.id = e.campaign_id "
        f"JOIN {_table(Annotator)} a ON a.id = e.annotator_id "
        f"WHERE e.campaign_id = %s AND {who} = %s{lock}"
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
        f"AND claim.annotator_id = %s AND claim.status IN {_LIVE})"
    )
    locks = for_update(skip_locked=True)
    regular, check = _constant(Item.Kind.REGULAR), _constant(Item.Kind.ATTENTION_CHECK)
    conditions = [f"i.kind = {regular} AND i.live_slots = {n}" for n in range(overlap)]
    conditions.append(f"i.kind = {check}")
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
    params = [campaign.pk, annotator_id] * (campaign.overlap + 1)  # per stream
    row = fetch_one(_first_open_sql(campaign.overlap), params)
    return None if row is None else _ITEM.instance(row)


@cache
def _take_slot_sql(limited: bool) -> str:
    below = " AND live_slots < %s" if limited else ""
    return f"UPDATE {_table(Item)} SET live_slots = live_slots + 1 WHERE id = %s{below}"


def _take_slot_params(item: Item, overlap: int) -> list[int]:
    return [item.pk] if item.is_per_annotator else [item.pk, overlap]


def take_slot(item: Item, overlap: int) -> bool:
    """Count one more live slot on the item, only while it has a free one (per-annotator items
    always have one)."""
    limited = not item.is_per_annotator
    return execute(_take_slot_sql(limited), _take_slot_params(item, overlap)) == 1


def writes_in_one_statement() -> bool:
    """Whether the database runs writes inside ``WITH`` (PostgreSQL, not SQLite): then the
    writes of a claim, or of a first submission, go to the server as one statement, one round
    trip instead of three (bench/README.md, "Annotation load")."""
    return connection.vendor == "postgresql"


_CLAIM_FIELDS = [field for field in Assignment._meta.concrete_fields if not field.primary_key]
_CLAIM_RENEWED = ("campaign", "status", "claimed_at", "expires_at", "updated_at")


def _insert_sql(model, fields, rows: str) -> str:
    """``INSERT INTO`` the model's table, its ``fields`` taken from ``rows`` (``VALUES ...``
    or a ``SELECT``)."""
    columns = ", ".join(quote(field.column) for field in fields)
    return f"INSERT INTO {_table(model)} ({columns}) {rows}"


def _values(fields) -> str:
    return f"VALUES ({', '.join(['%s'] * len(fields))})"


def _selected_values(fields, source: str) -> str:
    """The parameters of ``fields``, selected once per row of ``source``."""
    return f"SELECT {', '.join(['%s'] * len(fields))} FROM {source}"


@cache
def _claim_upsert() -> str:
    columns_of = {field.name: field.column for field in _CLAIM_FIELDS}
    renewed = ", ".join(
        f"{quote(columns_of[name])} = excluded.{quote(columns_of[name])}" for name in _CLAIM_RENEWED
    )
    return f" ON CONFLICT (item_id, annotator_id) DO UPDATE SET {renewed}"


@cache
def _claim_sql() -> str:
    return _insert_sql(Assignment, _CLAIM_FIELDS, _values(_CLAIM_FIELDS)) + _claim_upsert()


def _claim_row(item: Item, annotator: Annotator, campaign: Campaign, now: datetime) -> list:
    claim = Assignment(
        item=item,
        annotator=annotator,
        campaign=campaign,
        status=Assignment.Status.ACTIVE,
        claimed_at=now,
        expires_at=now + timedelta(seconds=campaign.claim_ttl_seconds),
    )
    return db_values(claim, _CLAIM_FIELDS, add=True)


def record_claim(item: Item, annotator: Annotator, campaign: Campaign, now: datetime) -> None:
    """Insert the active claim, or reactivate the annotator's expired claim on the item."""
    execute(_claim_sql(), _claim_row(item, annotator, campaign, now))


def claim_with_draft(item: Item, draft: Annotation, overlap: int, now: datetime) -> bool | None:
    """Claim ``item`` for the draft's annotator: count the slot (only while one is free:
    :func:`take_slot`), record the claim
    (:func:`record_claim`) and insert the draft (:func:`insert_annotation_unless_exists`).

    ``None`` when the slot was taken meanwhile (nothing changed); else whether the draft was
    inserted (its id set), ``False`` when an annotation of the item and annotator existed.
    """
    annotator, campaign = draft.annotator, draft.campaign
    if not writes_in_one_statement():
        if not take_slot(item, overlap):
            return None
        record_claim(item, annotator, campaign, now)
        return insert_annotation_unless_exists(draft)
    params = _take_slot_params(item, overlap) + _claim_row(item, annotator, campaign, now)
    params += db_values(draft, _ANNOTATION_FIELDS, add=True)
    row = fetch_one(_claim_with_draft_sql(not item.is_per_annotator), params)
    assert row is not None  # the final SELECT has no FROM: one row
    taken, annotation_id = row
    if not taken:
        return None
    if annotation_id is None:
        return False
    _inserted(draft, annotation_id)
    return True


@cache
def _claim_with_draft_sql(limited: bool) -> str:
    """:func:`claim_with_draft` in one statement: the claim and the draft are inserted for the
    row ``slot`` returns, the item when its counter went up (none when the slot was gone)."""
    slot = _take_slot_sql(limited) + " RETURNING id"
    claim = _insert_sql(Assignment, _CLAIM_FIELDS, _selected_values(_CLAIM_FIELDS, "slot"))
    draft_rows = _selected_values(_ANNOTATION_FIELDS, "slot")
    draft = _insert_sql(Annotation, _ANNOTATION_FIELDS, draft_rows)
    return (
        f"WITH slot AS ({slot}), claim AS ({claim}{_claim_upsert()}), "
        f"draft AS ({draft}{_annotation_unless_exists()}) "
        "SELECT (SELECT count(*) FROM slot), (SELECT id FROM draft)"
    )


@cache
def _claims_and_tutorial_sql() -> str:
    return (
        "SELECT EXISTS ("
        f"SELECT 1 FROM {_table(Assignment)} "
        f"WHERE annotator_id = %s AND campaign_id = %s "
        f"AND status = {_constant(Assignment.Status.ACTIVE)}"
        "), ("
        f"SELECT tutorial.id FROM {_table(Item)} tutorial "
        f"WHERE tutorial.campaign_id = %s AND tutorial.kind = {_constant(Item.Kind.TUTORIAL)} "
        "AND NOT EXISTS ("
        f"SELECT 1 FROM {_table(Assignment)} claim "
        "WHERE claim.item_id = tutorial.id AND claim.annotator_id = %s"
        ") ORDER BY tutorial.position, tutorial.id LIMIT 1)"
    )


def claims_and_tutorial(annotator_id: int, campaign_id: int) -> tuple[bool, int | None]:
    """Whether the annotator holds an active claim in the campaign, and the id of the first
    tutorial item they have never claimed (``None``: none left)."""
    row = fetch_one(
        _claims_and_tutorial_sql(),
        [annotator_id, campaign_id, campaign_id, annotator_id],  # active claim, tutorial
    )
    assert row is not None  # a SELECT without FROM returns its one row
    has_claim, tutorial_id = row
    return bool(has_claim), tutorial_id


_ANNOTATION_FIELDS = [field for field in Annotation._meta.concrete_fields if not field.primary_key]
_ANNOTATION_KEY = ("item", "annotator")
"""The fields of ``annotation_annotation_unique``: one annotation per item and annotator."""


@cache
def _annotation_unless_exists() -> str:
    column = {field.name: field.column for field in _ANNOTATION_FIELDS}
    key = ", ".join(quote(column[name]) for name in _ANNOTATION_KEY)
    return f" ON CONFLICT ({key}) DO NOTHING RETURNING {quote(Annotation._meta.pk.column)}"


@cache
def _insert_annotation_sql() -> str:
    rows = _values(_ANNOTATION_FIELDS)
    return _insert_sql(Annotation, _ANNOTATION_FIELDS, rows) + _annotation_unless_exists()


def _inserted(annotation: Annotation, pk: int) -> None:
    """Mark ``annotation`` as the row just inserted with id ``pk``."""
    annotation.pk = pk
    annotation._state.adding = False
    annotation._state.db = connection.alias


def insert_annotation_unless_exists(annotation: Annotation) -> bool:
    """Insert a new (item, annotator) annotation row unless one exists; True (and its id set)
    when it was inserted.

    ``INSERT ... ON CONFLICT DO NOTHING RETURNING id`` (PostgreSQL; SQLite 3.35+), so that
    next-item need not read back the row it just created: the ORM's
    ``bulk_create(ignore_conflicts=True)`` does not say whether it inserted. A database that
    cannot return columns from an INSERT (SQLite before 3.35) gets the ORM's insert and False:
    the caller then reads the row, as for a kept draft.
    """
    if not _insert_returning_supported():
        Annotation.objects.bulk_create([annotation], ignore_conflicts=True)
        return False  # not known whether it was inserted: the caller reads the row
    row = fetch_one(_insert_annotation_sql(), db_values(annotation, _ANNOTATION_FIELDS, add=True))
    if row is None:
        return False
    _inserted(annotation, row[0])
    return True


def _insert_returning_supported() -> bool:
    """``INSERT ... RETURNING``: PostgreSQL, SQLite from 3.35."""
    return bool(connection.features.can_return_columns_from_insert)


_LOCKED_ITEM = Columns(Item, "item")


@cache
def _locked_item_sql() -> str:
    return f"SELECT {_LOCKED_ITEM.sql} FROM {_table(Item)} item WHERE item.id = %s{for_update()}"


def locked_item(item_id: int) -> Item:
    """The item's row, read under its row lock."""
    row = fetch_one(_locked_item_sql(), [item_id])
    if row is None:
        raise Item.DoesNotExist("Item matching query does not exist.")
    return _LOCKED_ITEM.instance(row)


_SUBMITTED = Columns(Annotation, "annotation")


@cache
def _locked_for_submit_sql() -> str:
    # Only the annotation is locked: locking the joined campaign row too would serialize (and
    # deadlock) every submission of the campaign against the claims inserting rows that point
    # to it.
    lock = for_update("annotation")
    # LIMIT 1 as the ORM's subqueries: each matches at most one row by a unique constraint.
    return (
        f"SELECT {_SUBMITTED.sql}, {_CAMPAIGN.sql}, ("
        f"SELECT enrollment.status FROM {_table(Enrollment)} enrollment "
        "WHERE enrollment.campaign_id = annotation.campaign_id "
        "AND enrollment.annotator_id = annotation.annotator_id LIMIT 1"
        "), ("
        f"SELECT claim.status FROM {_table(Assignment)} claim "
        "WHERE claim.item_id = annotation.item_id "
        "AND claim.annotator_id = annotation.annotator_id LIMIT 1"
        "), ("
        f"SELECT keyed.item_id FROM {_table(Annotation)} keyed "
        "WHERE keyed.idempotency_key = %s AND keyed.annotator_id = annotation.annotator_id "
        # The unique index on (annotator, key) is partial (non-blank keys). A prepared statement
        # runs a generic plan, which cannot prove a parameter non-blank: without this clause it
        # reads every annotation of the annotator, a cost that grows with each submission.
        "AND keyed.idempotency_key <> '' LIMIT 1"
        f") FROM {_table(Annotation)} annotation "
        f"JOIN {_table(Campaign)} c ON c.id = annotation.campaign_id "
        f"WHERE annotation.item_id = %s AND annotation.annotator_id = %s{lock}"
    )


def locked_for_submit(
    item_id: int, annotator_id: int, key: str
) -> tuple[Annotation, str | None, str | None, int | None] | None:
    """The annotation row, locked, with its campaign; the status of the annotator's enrollment
    and of their claim on the item; and the item the idempotency key ``key`` was first used for
    by the annotator. ``None`` when the annotator has no annotation of the item."""
    # No key: NULL matches no row, so the key's subquery is NULL (a blank key would match
    # every annotation without one).
    row = fetch_one(_locked_for_submit_sql(), [key or None, item_id, annotator_id])
    if row is None:
        return None
    annotation = _SUBMITTED.instance(row)
    annotation.campaign = _CAMPAIGN.instance(row, _SUBMITTED.width)
    enrollment_status, claim_status, key_item_id = row[-3:]
    return annotation, enrollment_status, claim_status, key_item_id


_SUBMITTED_FIELD_NAMES = {
    "answer", "draft", "score", "mqm_score", "time_spent_seconds", "last_activity_at",
    "revision", "idempotency_key", "status", "submitted_at", "updated_at",
}  # fmt: skip
"""What a submission changes on the annotation row (the rest is the claim's)."""
_SUBMITTED_FIELDS = [
    field for field in Annotation._meta.concrete_fields if field.name in _SUBMITTED_FIELD_NAMES
]


@cache
def _save_submission_sql() -> str:
    assignments = ", ".join(f"{quote(field.column)} = %s" for field in _SUBMITTED_FIELDS)
    return (
        f"UPDATE {_table(Annotation)} SET {assignments} "
        f"WHERE {quote(Annotation._meta.pk.column)} = %s"
    )


def save_submission(annotation: Annotation) -> None:
    """``annotation.save(update_fields=...)`` for what a submission changes, as one UPDATE:
    the values prepared by the fields as ``save()`` prepares them (``updated_at`` set to now)."""
    values = db_values(annotation, _SUBMITTED_FIELDS, add=False)
    execute(_save_submission_sql(), [*values, annotation.pk])


@cache
def _claim_submitted_sql() -> str:
    return f"UPDATE {_table(Assignment)} SET status = %s WHERE item_id = %s AND annotator_id = %s"


def mark_claim_submitted(item_id: int, annotator_id: int) -> None:
    execute(_claim_submitted_sql(), [Assignment.Status.SUBMITTED.value, item_id, annotator_id])


@cache
def _count_completion_sql() -> str:
    return (
        f"UPDATE {_table(Item)} "
        "SET completed_count = completed_count + 1, live_slots = live_slots + %s WHERE id = %s"
    )


def count_completion(item_id: int, regained: int) -> None:
    """One more judgment on the item; ``regained`` slots (0 or 1) counted live again."""
    execute(_count_completion_sql(), [regained, item_id])


def save_first_submission(annotation: Annotation, regained: int) -> None:
    """:func:`save_submission`, :func:`mark_claim_submitted` and :func:`count_completion`
    for the first submission of an annotation: one statement where the database allows it
    (:func:`writes_in_one_statement`)."""
    item_id, annotator_id = annotation.item_id, annotation.annotator_id
    if not writes_in_one_statement():
        save_submission(annotation)
        mark_claim_submitted(item_id, annotator_id)
        count_completion(item_id, regained)
        return
    params = [*db_values(annotation, _SUBMITTED_FIELDS, add=False), annotation.pk]
    params += [Assignment.Status.SUBMITTED.value, item_id, annotator_id]  # the claim
    params += [regained, item_id]  # the item's counters
    execute(_first_submission_sql(), params)


@cache
def _first_submission_sql() -> str:
    # Writes in WITH run whether or not the statement reads their rows.
    return (
        f"WITH saved AS ({_save_submission_sql()}), claimed AS ({_claim_submitted_sql()}) "
        f"{_count_completion_sql()}"
    )
