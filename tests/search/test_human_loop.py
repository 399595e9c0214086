"""Humans in the loop: pulls go to an ESA campaign; human scores replace or calibrate."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from functools import partial

import numpy as np
import pytest
from django.utils import timezone

from annotation import qc
from annotation.models import Enrollment, Item
from annotation.services.claims import next_item_for
from annotation.services.submissions import start_viewing, submit_annotation
from difficulty.calibration import fit_calibration
from difficulty.services import build_difficulty_dataset_from_campaign
from search.models import Pull, SearchRun
from search.runs import services as run_services
from search.runs.services import restore_policy, run_in_foreground, start_search_run
from tests.annotation.factories import enrolled, esa_answer
from tests.search.conftest import (
    crowd_run_config,
    make_corpus_tree,
    make_crowd,
    queue_rounds_settle_in_place,
)


@pytest.fixture(autouse=True)
def _tasks_inline(monkeypatch):
    """Queue nothing: rounds are driven by the test, settling runs in place."""
    queue_rounds_settle_in_place(monkeypatch)


def human_run(fake_openai, mode: str, **human_settings) -> SearchRun:
    make_crowd(fake_openai.base_url, translators=("mt-a", "mt-b"))
    tree = make_corpus_tree(n_topics=6, per_topic=4)
    config = crowd_run_config(
        tree,
        name=f"{mode} run",
        human_mode=mode,
        human_settings={"overlap": 1, **human_settings},
    )
    return run_in_foreground(start_search_run(config, enqueue=False).pk)


def annotate_all(
    campaign,
    score_of,
    name: str = "rater",
    seconds: float | list[float] = 10.0,
    each_commit=contextlib.nullcontext,
) -> int:
    """One annotator scores every item of the campaign with ``score_of(item)``.

    Each item takes ``seconds`` (or the next of a list of them): an annotator answering in no
    time fails QC's time rule and counts for nothing (``annotation.selectors.item_results``).
    ``each_commit`` wraps each submission (``django_capture_on_commit_callbacks`` with
    ``execute=True`` runs its on-commit work, ``item_completed``, before the next item, as
    a committed request would; around the whole call it runs only at the end).
    """
    annotator = enrolled(campaign, name)
    durations = iter(seconds if isinstance(seconds, list) else [])
    now = timezone.now()
    done = 0
    while (item := next_item_for(annotator, campaign, now=now)) is not None:
        start_viewing(annotator, item, now=now)
        now += timedelta(seconds=next(durations, seconds if isinstance(seconds, float) else 10.0))
        with each_commit():
            submit_annotation(annotator, item, esa_answer(score_of(item)), now=now)
        now += timedelta(seconds=1)
        done += 1
    return done


def pull_of(item: Item) -> Pull:
    return Pull.objects.get(pk=int(item.origin_ref.split(":")[1]))


def test_replace_sends_top_k_texts_waits_and_lets_humans_reorder(
    db, fake_openai, django_capture_on_commit_callbacks
):
    run = human_run(fake_openai, "replace", rule="top_k", per_topic=1, max_items=4)
    assert run.status == "waiting"
    assert run.human_deadline is not None
    campaign = run.campaign
    assert campaign.protocol == "esa" and campaign.tgt_lang == "cs"
    sent = list(Pull.objects.filter(run=run, human_status="sent"))
    assert 1 <= len(sent) <= 4
    items = Item.objects.filter(campaign=campaign)
    # One item per translation, linked back by a generic origin reference.
    assert items.count() == 2 * len(sent)
    assert set(items.values_list("system", flat=True)) == {"mt-a", "mt-b"}
    assert all(i.origin == "search" and i.origin_ref.startswith("pull:") for i in items)
    top_before = restore_policy(run).top_k().tolist()
    sent_arms = {pull.arm for pull in sent}

    # Humans find the texts of the sent topics perfectly translatable (difficulty 0).
    with django_capture_on_commit_callbacks(execute=True):
        annotate_all(campaign, lambda item: 100)

    run.refresh_from_db()
    assert run.status == "finished"
    received = Pull.objects.filter(run=run, human_status="applied")
    assert received.count() == len(sent)
    for pull in received:
        assert pull.human_difficulty == 0.0 == pull.difficulty
        assert set(pull.human_scores) == {"mt-a", "mt-b"}
    policy = restore_policy(run)
    # The bandit's sums now hold the human value for those pulls.
    for arm in sent_arms:
        values = Pull.objects.filter(run=run, arm=arm).values_list("difficulty", flat=True)
        assert policy.stats.sums[arm] == pytest.approx(sum(values))
    top_after = policy.top_k().tolist()
    assert top_after != top_before
    assert run.result["top_k"] == top_after


def test_replace_keeps_pulling_other_arms_while_humans_work(db, fake_openai):
    run = human_run(fake_openai, "replace", rule="top_k", per_topic=1, max_items=2)
    assert run.pulls_done == 16  # the budget was spent without waiting for anybody
    assert Pull.objects.filter(run=run, human_status="sent").exists()


def test_a_human_deadline_ends_the_wait(db, fake_openai):
    run = human_run(fake_openai, "replace", rule="top_k", per_topic=1, max_items=2)
    SearchRun.objects.filter(pk=run.pk).update(human_deadline="2000-01-01T00:00:00Z")
    run_services.recover_runs()
    run.refresh_from_db()
    assert run.status == "finished"
    assert Pull.objects.filter(run=run, human_status="sent").exists()  # never answered


def test_calibrate_fits_a_monotone_map_and_moves_every_estimate(
    db, fake_openai, django_capture_on_commit_callbacks
):
    run = human_run(fake_openai, "calibrate", rule="fraction", fraction=0.5, max_items=8)
    assert run.status == "waiting"
    sent = Pull.objects.filter(run=run, human_status="sent").count()
    assert sent == 8

    # Humans agree on the ranking but see everything as half as difficult.
    def score_of(item):
        return round(100 - pull_of(item).automatic_difficulty / 2)

    with django_capture_on_commit_callbacks(execute=True):
        annotate_all(run.campaign, score_of)

    run.refresh_from_db()
    assert run.status == "finished"
    report = run.calibration
    assert report["n_pairs"] == 8
    after = report["after_cross_validated"]
    assert "after" not in report  # in-sample figures flatter the map: only held-out ones
    assert report["before"]["n_pairs"] == after["n_pairs"] == 8
    assert (after["folds"], after["method"]) == (8, "leave-one-out")
    # Each judged pull scored by the map fitted on the seven others.
    judged = list(Pull.objects.filter(run=run, human_difficulty__isnull=False))
    auto = np.array([p.automatic_difficulty for p in judged])
    human = np.array([p.human_difficulty for p in judged])
    held_out = [
        fit_calibration(np.delete(auto, i), np.delete(human, i)).apply(auto[i : i + 1])[0]
        for i in range(8)
    ]
    assert after["mae"] == pytest.approx(np.mean(np.abs(np.array(held_out) - human)))
    assert after["mae"] < report["before"]["mae"]
    assert report["before"]["kendall_tau"] == pytest.approx(after["kendall_tau"], abs=0.3)
    assert report["before"]["dec"] is not None
    pulls = list(Pull.objects.filter(run=run))
    # Every pull, judged or not, now enters the bandit through the fitted map.
    moved = [p for p in pulls if p.difficulty != p.automatic_difficulty]
    assert len(moved) >= len(pulls) // 2
    x, y = np.array(report["x"]), np.array(report["y"])
    for pull in pulls:
        assert pull.difficulty == pytest.approx(np.interp(pull.automatic_difficulty, x, y))
    policy = restore_policy(run)
    for arm in {p.arm for p in pulls}:
        values = [p.difficulty for p in pulls if p.arm == arm]
        assert policy.stats.sums[arm] == pytest.approx(sum(values))


def test_revised_annotations_do_not_count_twice(
    db, fake_openai, django_capture_on_commit_callbacks
):
    run = human_run(fake_openai, "replace", rule="top_k", per_topic=1, max_items=1)
    with django_capture_on_commit_callbacks(execute=True):
        annotate_all(run.campaign, lambda item: 40)
    pull = Pull.objects.get(run=run, human_status="applied")
    sums_before = restore_policy(SearchRun.objects.get(pk=run.pk)).stats.sums.copy()
    # The same signal again (e.g. a revision) changes nothing.
    from annotation.signals import item_completed

    item = Item.objects.filter(campaign=run.campaign).first()
    with django_capture_on_commit_callbacks(execute=True):
        item_completed.send(sender=Item, item=item)
    run_services.settle(run.pk)
    assert pull.human_difficulty == 60.0
    assert np.array_equal(restore_policy(SearchRun.objects.get(pk=run.pk)).stats.sums, sums_before)


def test_a_qc_failed_annotator_counts_neither_in_the_loop_nor_in_a_dataset(
    db, fake_openai, django_capture_on_commit_callbacks
):
    """Issue 40: an annotator answering 4 of 4 items in under 3 s completed the items while
    their verdict still read ``pass`` (the time rule waits for 5 items or the end), so the
    loop took their scores; the dashboard then said ``fail``."""
    run = human_run(fake_openai, "replace", rule="top_k", per_topic=1, max_items=2, overlap=2)
    campaign = run.campaign
    assert campaign.items.count() == 4
    each = partial(django_capture_on_commit_callbacks, execute=True)
    annotate_all(campaign, lambda item: 100, name="careful", each_commit=each)
    annotate_all(campaign, lambda item: 0, name="speedy", seconds=1.0, each_commit=each)

    run.refresh_from_db()
    assert run.status == "finished"
    verdicts = {
        e.annotator.user.username: qc.verdict_for(e)
        for e in Enrollment.objects.filter(campaign=campaign).select_related("annotator__user")
    }
    assert verdicts == {"careful": "pass", "speedy": "fail"}
    applied = list(Pull.objects.filter(run=run, human_status="applied"))
    assert len(applied) == 2
    for pull in applied:
        assert pull.human_scores == {"mt-a": 100.0, "mt-b": 100.0}
        assert pull.human_difficulty == 0.0 == pull.difficulty

    dataset = build_difficulty_dataset_from_campaign(campaign, name="from the run")
    matrix = dataset.language_pairs.get().score_matrix()
    assert matrix.shape == (2, 2)
    assert np.array_equal(matrix, np.full((2, 2), 100.0))


def test_a_judgment_pending_when_its_item_completed_counts_once_its_annotator_passes(
    db, fake_openai, django_capture_on_commit_callbacks
):
    run = human_run(fake_openai, "replace", rule="top_k", per_topic=1, max_items=2)
    first_pull = pull_of(Item.objects.filter(campaign=run.campaign).order_by("position").first())
    # Two fast answers first (the first pull's items): pending, too fast so far on too few
    # items; two careful ones then make it a pass (2 of 4 fast is within the limit).
    each = partial(django_capture_on_commit_callbacks, execute=True)
    annotate_all(run.campaign, lambda item: 40, seconds=[1.0, 1.0, 10.0, 10.0], each_commit=each)

    run.refresh_from_db()
    assert run.status == "finished"
    first_pull.refresh_from_db()
    assert first_pull.human_status == "applied"
    assert first_pull.human_difficulty == 60.0
    assert Pull.objects.filter(run=run, human_status="applied").count() == 2


def test_the_boundary_rule_sends_texts_of_topics_near_the_top_k_and_applies_the_answers(
    db, fake_openai, django_capture_on_commit_callbacks
):
    run = human_run(fake_openai, "replace", rule="boundary", per_topic=1, max_items=4)
    sent = list(Pull.objects.filter(run=run, human_status="sent"))
    # Before any answer the gap is wide: the first round's ranked topics are all in play.
    assert 1 <= len(sent) <= 4
    with django_capture_on_commit_callbacks(execute=True):
        annotate_all(run.campaign, lambda item: 100)
    run.refresh_from_db()
    assert run.status == "finished"
    assert Pull.objects.filter(run=run, human_status="applied").count() == len(sent)
