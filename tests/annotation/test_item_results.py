"""``selectors.item_results``: the one way other apps read per-item human results.

Its numbers must be the ones producers computed before it existed: the per-item export's mean
score (difficulty datasets), ``campaign_progress``'s idea of a complete item, and the human
loop's mean of stored scores once ``overlap`` scores are in.
"""

from __future__ import annotations

from statistics import fmean

import numpy as np
import pytest
from django.db.models import Avg

from annotation import exports, selectors
from annotation.models import Annotation, Item
from annotation.services.campaigns import generate_attention_checks
from tests.annotation.campaign_builders import (
    choice_answer,
    choice_campaign,
    esa_answer,
    esa_campaign,
    make_annotator,
    mqm_campaign,
    work,
)

pytestmark = pytest.mark.django_db


def _scores(values):
    """An ``answer_for`` that gives the next value of ``values`` (None stops the annotator)."""
    queue = list(values)
    return lambda item: esa_answer(queue.pop(0)) if queue and queue[0] is not None else None


def test_esa_results_match_the_export_progress_and_the_human_loop():
    campaign = esa_campaign(overlap=2)
    work(make_annotator("alice"), campaign, _scores([70, 41, 90]))
    work(make_annotator("bob"), campaign, _scores([71, None]))
    generate_attention_checks(campaign, 1, np.random.default_rng(0))

    results = list(selectors.item_results(campaign))

    # alice finished (no evidence against her: pass); bob is still working and has not met the
    # attention check yet (pending), so his 71 is submitted but not counted.
    assert [(r.system, r.origin, r.origin_ref, r.n_submitted, r.n_judgments, r.mean_score,
             r.complete, r.validated) for r in results] == [
        ("sysA", "search", "run-1/1", 2, 1, 70.0, True, False),
        ("sysA", "search", "run-1/2", 1, 1, 41.0, False, False),
        ("sysB", "", "", 1, 1, 90.0, False, False),
    ]  # fmt: skip
    assert results[0].verdicts == {"ann-alice": "pass", "ann-bob": "pending"}
    assert results[0].excluded == {"ann-bob": "pending"}
    # (b) the per-item export and campaign_progress, as difficulty datasets read them.
    aggregated = list(exports.aggregate_rows(campaign))
    assert [(r.item_id, r.mean_score, r.n_judgments, r.excluded) for r in results] == [
        (row["item_id"], row["mean_score"], row["n_annotations"], row["excluded"])
        for row in aggregated
    ]
    progress = selectors.campaign_progress(campaign)
    assert (sum(r.complete for r in results), len(results)) == (
        progress["items_done"],
        progress["items"],
    )
    # (a) the human loop: mean of the stored scores of annotators who pass QC.
    alice = Annotation.objects.filter(annotator__pseudonym="ann-alice", status="submitted")
    for result in results:
        scored = alice.filter(item_id=result.item_id, score__isnull=False)
        assert result.n_scored == scored.count()
        assert result.mean_score == pytest.approx(scored.aggregate(mean=Avg("score"))["mean"])


def test_filters_by_origin_and_reference_prefix():
    campaign = esa_campaign(overlap=1)
    work(make_annotator("alice"), campaign, _scores([10, 20, 30]))
    by_prefix = selectors.item_results(campaign, origin="search", origin_ref_prefix="run-1/")
    assert [(r.origin_ref, r.mean_score) for r in by_prefix] == [
        ("run-1/1", 10.0),
        ("run-1/2", 20.0),
    ]
    assert [r.origin_ref for r in selectors.item_results(campaign, origin="")] == [""]
    assert list(selectors.item_results(campaign, origin_ref_prefix="run-2/")) == []


def test_mqm_means_follow_the_campaigns_current_weights_like_the_export():
    campaign = mqm_campaign(overlap=1)
    major = {"start": 0, "end": 3, "severity": "major", "category": "Accuracy",
             "subcategory": "Mistranslation"}  # fmt: skip
    answers = iter([{"spans": [major]}, {"spans": [], "no_errors": True}])
    work(make_annotator("alice"), campaign, lambda item: next(answers, None))
    campaign.mqm_weights = {"major": 10}
    campaign.save()

    results = list(selectors.item_results(campaign))
    aggregated = list(exports.aggregate_rows(campaign))
    assert [r.mean_score for r in results] == [row["mean_score"] for row in aggregated]
    stored = Annotation.objects.get(item_id=results[0].item_id).score
    assert results[0].mean_score != stored  # re-scored: weight 10 instead of 5
    assert [r.complete for r in results] == [True, True, False, False]


def test_choice_items_have_no_score_but_know_when_they_are_complete():
    campaign = choice_campaign(overlap=2)
    for name in ("alice", "bob"):
        picks = iter([choice_answer(0)])
        work(make_annotator(name), campaign, lambda item, picks=picks: next(picks, None))
    results = list(selectors.item_results(campaign))
    assert [(r.n_submitted, r.n_scored, r.mean_score, r.complete) for r in results] == [
        (2, 0, None, True),
        (0, 0, None, False),
        (0, 0, None, False),
        (0, 0, None, False),
    ]


def test_query_count_does_not_grow_with_items(django_assert_num_queries):
    campaign = esa_campaign(overlap=1)
    work(make_annotator("alice"), campaign, _scores([50, 60, 70]))
    assert Item.objects.filter(campaign=campaign).count() == 3
    # QC verdicts (enrollments, whether the campaign has checks, one query per annotator),
    # then the items and their submitted annotations.
    with django_assert_num_queries(5):
        results = list(selectors.item_results(campaign))
    assert fmean(r.mean_score for r in results) == 60.0
