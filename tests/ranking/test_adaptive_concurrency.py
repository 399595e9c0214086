"""Annotators of an adaptive campaign at once, with real parallel database connections: the
policy's picks are locked as the ordered path's are (``SKIP LOCKED`` on PostgreSQL, serialized
writers on SQLite), and the goal checks after their submissions lock the campaign row without
holding up the claims."""

from __future__ import annotations

from collections import Counter

import pytest

from annotation.models import Annotation, Assignment, Item
from annotation.services.claims import next_item_for
from annotation.services.submissions import submit_annotation
from tests.annotation.factories import enrolled, esa_answer
from tests.annotation.test_concurrency import run_parallel
from tests.ranking.test_adaptive_campaigns import systems_campaign

pytestmark = pytest.mark.django_db(transaction=True)


def test_parallel_annotators_never_take_a_cell_twice():
    campaign = systems_campaign(4)  # 12 cells, overlap 1
    team = [enrolled(campaign, f"p{i}") for i in range(6)]

    def work(annotator) -> list[int]:
        taken = []
        for _ in range(2):
            item = next_item_for(annotator, campaign)
            if item is None:
                break
            submit_annotation(annotator, item, esa_answer(60))
            taken.append(item.pk)
        return taken

    results = run_parallel([lambda a=a: work(a) for a in team])
    assert not [r for r in results if isinstance(r, Exception)], results
    taken = Counter(pk for items in results for pk in items)
    assert taken and max(taken.values()) == 1
    assert not Item.objects.filter(campaign=campaign, live_slots__gt=1).exists()
    assert Assignment.objects.filter(status="submitted").count() == sum(taken.values())
    assert Annotation.objects.filter(status="submitted").count() == sum(taken.values())
    campaign.refresh_from_db()
    assert campaign.assignment_state["spent"] <= sum(taken.values())
