"""Per-annotator item order: seeded, reproducible, recorded in exports, claim guarantees kept."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import pytest

from annotation import exports, ordering
from annotation.models import Annotation, Assignment, Enrollment, Item
from annotation.services.campaigns import create_campaign
from annotation.services.claims import item_order, next_item_for
from annotation.services.enrollment import reset_annotator_work
from annotation.services.submissions import submit_annotation
from tests.annotation.campaign_builders import make_annotator, work
from tests.annotation.factories import choice_item, enrolled
from tests.annotation.test_concurrency import run_parallel

ANSWER = {"selected": [0], "confidence": 3}


def _claimed(annotator) -> list[int]:
    return list(
        Assignment.objects.filter(annotator=annotator)
        .order_by("claimed_at", "id")
        .values_list("item_id", flat=True)
    )


# --- the pure permutation --------------------------------------------------------------------


def test_seeds_and_ranks_are_deterministic_and_bounded():
    seed = ordering.annotator_seed(12345, 7)
    assert seed == ordering.annotator_seed(12345, 7)
    assert seed != ordering.annotator_seed(12345, 8) != ordering.annotator_seed(54321, 7)
    assert 0 <= seed < 2**62
    ranks = [ordering.item_rank(item_id, seed) for item_id in (1, 2, 2**40, 2**63 - 1)]
    assert all(0 <= r < ordering.PRIME for r in ranks)
    assert ordering.item_rank(2, seed) == ranks[1]


def test_different_seeds_give_different_orders_not_rotations():
    items = [(n, n) for n in range(1, 41)]
    first = ordering.ordered(items, ordering.annotator_seed(1, 1))
    second = ordering.ordered(items, ordering.annotator_seed(1, 2))
    assert sorted(first) == sorted(second) == list(range(1, 41))
    assert first != second
    start = second.index(first[0])
    assert first != second[start:] + second[:start]
    assert ordering.ordered(items, None) == list(range(1, 41))


# --- through the claim query -----------------------------------------------------------------


def _campaign(n_items: int = 12, **settings):
    settings.setdefault("overlap", 2)
    return create_campaign(
        f"Shuffle {Item.objects.count()}", "choice",
        [choice_item(n) for n in range(1, n_items + 1)], ask_confidence=True, **settings,
    )  # fmt: skip


@pytest.mark.django_db
def test_sql_rank_is_the_python_rank():
    campaign = _campaign(30, shuffle_items=True)
    seed = ordering.annotator_seed(campaign.item_order_seed, 99)
    ranked = campaign.items.annotate(rank=item_order(seed)[0]).values_list("id", "rank")
    assert {pk: rank for pk, rank in ranked} == {
        pk: ordering.item_rank(pk, seed) for pk in campaign.items.values_list("id", flat=True)
    }


@pytest.mark.django_db
def test_two_annotators_get_different_reproducible_orders():
    campaign = _campaign(shuffle_items=True)
    a, b = make_annotator("sa"), make_annotator("sb")
    for annotator in (a, b):
        assert work(annotator, campaign, lambda item: ANSWER) == 12
    items = list(campaign.items.values_list("id", "position"))
    seeds = dict(Enrollment.objects.values_list("annotator_id", "item_order_seed"))
    assert seeds[a.pk] == ordering.annotator_seed(campaign.item_order_seed, a.pk)
    assert _claimed(a) == ordering.ordered(items, seeds[a.pk])
    assert _claimed(b) == ordering.ordered(items, seeds[b.pk])
    assert _claimed(a) != _claimed(b)
    assert _claimed(a) != ordering.ordered(items, None)

    # Reproducible: the same annotator starting again sees the same order.
    first = _claimed(a)
    reset_annotator_work(Enrollment.objects.get(annotator=a))
    assert work(a, campaign, lambda item: ANSWER) == 12
    assert _claimed(a) == first

    # Recorded in the exports: the seed and each item's place in the annotator's order.
    rows = [json.loads(line) for line in exports.stream_export(campaign, "jsonl")]
    mine = sorted(
        (r for r in rows if r["annotator"] == "ann-sa"), key=lambda r: r["item_order_position"]
    )
    assert [r["item_id"] for r in mine] == first
    assert {r["item_order_seed"] for r in mine} == {seeds[a.pk]}
    table = list(csv.DictReader(io.StringIO("".join(exports.stream_export(campaign, "csv")))))
    assert table[0]["item_order_seed"] and table[0]["item_order_position"]


@pytest.mark.django_db
def test_shuffle_off_keeps_position_order_and_exports_no_order_columns():
    campaign = _campaign(5)
    assert campaign.shuffle_items is False
    annotator = make_annotator("plain")
    work(annotator, campaign, lambda item: ANSWER)
    assert _claimed(annotator) == list(
        campaign.items.order_by("position").values_list("id", flat=True)
    )
    assert Enrollment.objects.get(annotator=annotator).item_order_seed is None
    header = next(iter(exports.stream_export(campaign, "csv")))
    assert "item_order_seed" not in header


@pytest.mark.django_db
def test_overlap_is_kept_and_nobody_gets_an_item_twice_when_shuffled():
    campaign = _campaign(6, shuffle_items=True, overlap=2)
    annotators = [make_annotator(f"s{n}") for n in range(5)]
    for annotator in annotators:
        work(annotator, campaign, lambda item: ANSWER)
    per_item = Counter(
        Annotation.objects.filter(status="submitted").values_list("item_id", flat=True)
    )
    assert sorted(per_item.values()) == [2] * 6
    for annotator in annotators:
        claimed = _claimed(annotator)
        assert len(claimed) == len(set(claimed))


@pytest.mark.django_db(transaction=True)
def test_concurrent_claims_fill_each_item_exactly_to_overlap_when_shuffled():
    campaign = _campaign(3, shuffle_items=True, overlap=2)
    annotators = [enrolled(campaign, f"c{n}") for n in range(10)]

    def take(annotator):
        item = next_item_for(annotator, campaign)
        if item is not None:
            submit_annotation(annotator, item, ANSWER)
        return item

    results = run_parallel([lambda a=a: take(a) for a in annotators])
    assert not [r for r in results if isinstance(r, Exception)], results
    per_item = Counter(r.pk for r in results if isinstance(r, Item))
    assert sorted(per_item.values()) == [2, 2, 2]
    assert sorted(Item.objects.values_list("completed_count", flat=True)) == [2, 2, 2]
    assert sorted(Item.objects.values_list("live_slots", flat=True)) == [2, 2, 2]
