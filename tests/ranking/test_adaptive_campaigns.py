"""Adaptive multi-system campaigns (issue 42): ranking's policies behind annotation's registry.

The adapter (cells to grid and back) and the goal check are tested without a database; the
campaign itself through the services, with annotators interleaving their requests.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotation import assignment
from annotation.models import Assignment, Campaign, Enrollment, Item
from annotation.refusals import NotAllowed
from annotation.services.adaptive import campaign_cells
from annotation.services.campaigns import create_campaign
from annotation.services.claims import next_item_for
from annotation.services.submissions import start_viewing, submit_annotation
from ranking.assignment import PATIENCE, build_grid
from tests.annotation.factories import enrolled, esa_answer, esa_item

MEANS = {"alpha": 90, "beta": 50, "gamma": 45}


def grid_cells(systems, segments, judgments, sums, *, cap=1, priors=None) -> assignment.Cells:
    """Cells of items 1..n, item i on ``systems[i]`` and ``segments[i]`` (indices)."""
    names = sorted(set(systems))
    return assignment.Cells(
        item_ids=np.arange(1, len(systems) + 1),
        system_of=np.array([names.index(s) for s in systems]),
        segment_of=np.array(segments),
        systems=names,
        segments=[("d", str(s)) for s in range(max(segments) + 1)],
        judgments=np.array(judgments),
        score_sums=np.array(sums, dtype=float),
        priors=np.array([np.nan if p is None else p for p in priors or [None] * len(systems)]),
        cap=cap,
    )


def cells(judgments, sums, *, cap=1, priors=None) -> assignment.Cells:
    """Two systems (a, b) on two segments; item ids 1..4: b's two, then a's two."""
    return grid_cells(["b", "b", "a", "a"], [0, 1, 0, 1], judgments, sums, cap=cap, priors=priors)


def test_grid_sorts_systems_and_opens_only_the_offered_items():
    grid = build_grid(
        cells([0, 1, 2, 0], [0, 40, 150, 0], cap=2, priors=[None, 30, 80, None]), [1, 4]
    )
    assert grid.systems == ["a", "b"]
    assert grid.item_at.tolist() == [[3, 4], [1, 2]]
    # Item 3 has two judgments (the cap), item 2 one but is not offered: both closed.
    assert grid.state.counts.tolist() == [[2, 0], [0, 1]]
    assert grid.state.open_cells().tolist() == [[False, True], [True, False]]
    assert grid.state.cell_means()[0, 0] == 75
    assert grid.state.prior is not None and grid.state.prior[0, 0] == 80


def test_a_cell_above_the_overlap_counts_as_full_with_its_mean():
    grid = build_grid(cells([3, 0, 0, 0], [150, 0, 0, 0], cap=2))
    assert grid.state.counts[1, 0] == 2 and grid.state.cell_means()[1, 0] == 50


def test_policies_rank_only_offered_items():
    for name in ("uniform", "pearmut", "settle"):
        policy = assignment.get(name)
        ranked = policy.rank(cells([0] * 4, [0.0] * 4), [2, 3], assignment.Goal(), [1, 2], 5)
        assert sorted(ranked) == [2, 3], name


def test_goal_check_settles_after_patience_agreeing_checks():
    n_segments = 6
    both = grid_cells(
        ["a"] * n_segments + ["b"] * n_segments,
        list(range(n_segments)) * 2,
        [1] * (2 * n_segments),
        [90.0 + s for s in range(n_segments)] + [30.0 + s for s in range(n_segments)],
    )
    policy = assignment.get("settle")
    history: list = []
    for check in range(PATIENCE):
        report = policy.check(both, assignment.Goal("top", 0.05), history, [check])
        history = report.history
        assert report.settled == (check == PATIENCE - 1)
    assert [row["system"] for row in report.systems] == ["a", "b"]
    assert [row["cluster"] for row in report.systems] == [1, 2]


def systems_campaign(n_segments: int = 10, *, second: dict | None = None, **settings) -> Campaign:
    """Every system of MEANS on ``n_segments`` segments; ``second`` goes in second position."""
    items = [
        esa_item(
            segment, system=system, doc_id=f"doc-{segment}", target=f"{system} says {segment}."
        )
        for segment in range(n_segments)
        for system in MEANS
    ]
    items[1:1] = [second] if second else []
    settings.setdefault("qc_min_seconds_per_item", 0)
    return create_campaign("Adaptive", "esa", items, assignment_policy="settle", **settings)


def score_of(item: Item) -> dict:
    """Each system's score, with a little noise by segment so the tests have variance."""
    return esa_answer(MEANS[item.system] + int(item.seg_id) % 3)


@pytest.mark.django_db
def test_interleaved_annotators_settle_the_top_cluster_and_the_campaign_closes(
    django_capture_on_commit_callbacks,
):
    campaign = systems_campaign()
    team = [enrolled(campaign, name) for name in ("ann", "bea", "cem")]
    now = timezone.now()
    handed: list[int] = []
    while Campaign.objects.get(pk=campaign.pk).is_open and len(handed) < 30:
        for annotator in team:
            campaign.refresh_from_db()
            if not campaign.is_open:
                break
            item = next_item_for(annotator, campaign, now=now)
            assert item is not None
            handed.append(item.pk)
            with django_capture_on_commit_callbacks(execute=True):
                submit_annotation(annotator, item, score_of(item), now=now)
            now += timedelta(seconds=5)
    campaign.refresh_from_db()
    state = campaign.assignment_state
    assert campaign.status == Campaign.Status.CLOSED and state["stopped_at"]
    assert len(handed) == len(set(handed)) == state["spent"] < 30
    assert state["full"] == 30 and state["saved"] == 30 - state["spent"]
    assert [row["system"] for row in state["systems"] if row["cluster"] == 1] == ["alpha"]
    assert not Item.objects.filter(campaign=campaign, completed_count__gt=1).exists()
    with pytest.raises(NotAllowed):
        next_item_for(team[0], campaign, now=now)


@pytest.mark.django_db
def test_a_failed_annotator_counts_for_nothing_and_their_cells_return_to_the_pool(
    django_capture_on_commit_callbacks,
):
    check = esa_item(
        99, kind="attention_check", target="perfect", expected={"score_min": 90, "no_spans": True}
    )
    campaign = systems_campaign(4, second=check, qc_min_checks=1)
    careless, careful = enrolled(campaign, "careless"), enrolled(campaign, "careful")
    now = timezone.now()
    first = next_item_for(careless, campaign, now=now)
    assert first is not None and first.kind == Item.Kind.REGULAR
    with django_capture_on_commit_callbacks(execute=True):
        submit_annotation(careless, first, esa_answer(10), now=now)
    due = next_item_for(careless, campaign, now=now)
    assert due is not None and due.kind == Item.Kind.ATTENTION_CHECK  # one item taken: due
    start_viewing(careless, due, now=now)
    with django_capture_on_commit_callbacks(execute=True):
        submit_annotation(careless, due, esa_answer(10), now=now + timedelta(seconds=9))
    campaign.refresh_from_db()
    assert campaign.assignment_state["excluded"] == [careless.pk]
    assert Enrollment.objects.get(annotator=careless).status == Enrollment.Status.PAUSED
    first.refresh_from_db()
    assert (first.completed_count, first.live_slots) == (0, 0)
    assert Assignment.objects.get(item=first, annotator=careless).status == "expired"
    assert campaign_cells(campaign).judged == 0
    # The returned cell is offered again: the careful annotator gets it among the others.
    taken = set()
    while (item := next_item_for(careful, campaign, now=now)) is not None and len(taken) < 20:
        taken.add(item.pk)
        submit_annotation(careful, item, {"spans": [], "score": 95}, now=now)
    assert first.pk in taken


def test_the_policy_only_reorders_what_the_order_offers():
    """Same seed, same cells, same candidates: the same pick (no hidden state)."""
    policy = assignment.get("settle")
    c = cells([0] * 4, [0.0] * 4, priors=[10, 90, 50, 50])
    picks = {tuple(policy.rank(c, [1, 2, 3, 4], assignment.Goal(), [7, 1], 4)) for _ in range(3)}
    assert len(picks) == 1 and sorted(next(iter(picks))) == [1, 2, 3, 4]
    assert np.all(np.array(next(iter(picks))) > 0)


@pytest.mark.django_db
def test_the_api_takes_and_shows_the_policy_and_names_an_unknown_one(admin_user):
    api = APIClient()
    api.force_authenticate(admin_user)
    items = [esa_item(1, system="alpha"), esa_item(1, system="beta")]

    def imported(name: str, **settings):
        body = {"name": name, "protocol": "esa", "items": items, "settings": settings}
        return api.post("/api/campaigns/import/", body, format="json")

    refused = imported("Bad", assignment_policy="oracle", assignment_alpha=0.9)
    assert refused.status_code == 400
    assert {"assignment_policy", "assignment_alpha"} <= set(refused.json())
    assert "unknown assignment policy 'oracle'" in refused.json()["assignment_policy"][0]
    assert not Campaign.objects.filter(name="Bad").exists()
    created = imported("Good", assignment_policy="pearmut", assignment_goal="adjacent")
    assert created.status_code == 201
    shown = api.get(f"/api/campaigns/{created.json()['id']}/").json()
    assert (shown["assignment_policy"], shown["assignment_goal"], shown["assignment_alpha"]) == (
        "pearmut",
        "adjacent",
        0.05,
    )


@pytest.mark.django_db
def test_the_prior_is_read_from_the_items_meta():
    campaign = systems_campaign(2, assignment_prior="qe")
    Item.objects.filter(campaign=campaign, system="alpha").update(meta={"qe": 81.5})
    Item.objects.filter(campaign=campaign, system="beta").update(meta={"qe": "n/a"})
    priors = campaign_cells(campaign).priors.reshape(2, 3)  # segment-major, alpha beta gamma
    assert priors[:, 0].tolist() == [81.5, 81.5] and np.isnan(priors[:, 1:]).all()
