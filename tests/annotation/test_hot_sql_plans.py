"""The plans PostgreSQL makes for the hot statements once they run prepared (annotation/hot_sql.py).

After its fifth run on a connection a statement is prepared, and PostgreSQL may keep one generic
plan for it, made without the parameters' values. Two things made those plans read more rows
with every submission: a lookup that a partial index serves only when the planner can see the
index's condition, and code constants (kinds, statuses) bound as parameters, so that the plan
expected the average row count of any kind.
"""

from __future__ import annotations

import itertools
import re

import pytest
from django.db import connection

from annotation import hot_sql
from tests import databases
from tests.annotation.factories import enrolled, esa_campaign

pytestmark = [
    pytest.mark.django_db,
    databases.postgres_only("PostgreSQL's plan cache"),
]


def generic_plan(sql: str, params: list, **settings: str) -> str:
    """EXPLAIN of the generic plan of ``sql`` prepared, with ``params`` for its parameters."""
    numbers = itertools.count(1)
    numbered = re.sub("%s", lambda _match: f"${next(numbers)}", sql)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        for name, value in settings.items():
            cursor.execute(f"SET LOCAL {name} = {value}")
        cursor.execute(f"PREPARE hot_plan AS {numbered}")
        try:
            values = ", ".join(["%s"] * len(params))
            cursor.execute(f"EXPLAIN (COSTS OFF) EXECUTE hot_plan({values})", params)
            return "\n".join(line for (line,) in cursor.fetchall())
        finally:
            cursor.execute("DEALLOCATE hot_plan")


def test_the_idempotency_key_lookup_can_use_its_partial_index_in_a_generic_plan():
    plan = generic_plan(hot_sql._locked_for_submit_sql(), ["a-key", 1, 1], enable_seqscan="off")
    # Without the index's own condition in the query, a generic plan cannot prove a parameter
    # non-blank and reads every annotation of the annotator instead.
    assert "annotation_annotation_unique_idem_key" in plan


def test_a_generic_plan_looks_up_the_rare_tutorial_items_by_index():
    campaign = esa_campaign(300)  # regular items only: no tutorial
    annotator = enrolled(campaign, "planner")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_item")
    plan = generic_plan(
        hot_sql._claims_and_tutorial_sql(), [annotator.pk, campaign.pk, campaign.pk, annotator.pk]
    )
    # With the kind bound, the plan expected half the campaign's items and read them all.
    assert "Seq Scan on annotation_item" not in plan
    assert "annotation_item_open_idx" in plan


def test_code_constants_are_written_in_and_nothing_else_can_be():
    sql = hot_sql._first_open_sql(2)
    assert "i.kind = 'regular' AND i.live_slots = 0" in sql
    assert "i.kind = 'regular' AND i.live_slots = 1" in sql
    assert "i.kind = 'attention_check'" in sql
    assert "claim.status IN ('active', 'submitted')" in sql
    assert sql.count("%s") == 2 * 3  # campaign and annotator, per stream
    with pytest.raises(AssertionError):
        hot_sql._constant("it's")
