"""Rankings through their service: the four inputs, the stored settings and result, refusals
that name the field and write nothing, and the job's lifecycle on the round kernel."""

from __future__ import annotations

import math
from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone
from scipy import stats as scipy_stats

from annotation.models import Item
from annotation.services.campaigns import create_campaign
from annotation.services.claims import next_item_for
from annotation.services.submissions import start_viewing, submit_annotation
from difficulty.releases.judgments import JUDGMENT_DTYPE, table_to_bytes
from engines.services import register_replay
from ranking import inputs, services, stats
from ranking.models import SystemRanking
from ranking.services import RankingError, start_ranking
from tests.annotation.factories import enrolled
from tests.engines.factories import ReplayEngineFactory
from tests.ranking.support import (
    TIERS,
    dataset_rows,
    make_dataset,
    make_version,
    tiered_dataset,
    tiered_scores,
    version_items,
)

pytestmark = pytest.mark.django_db


def ranked(**settings) -> SystemRanking:
    ranking = start_ranking(enqueue=False, **settings)
    return services.run_in_foreground(ranking.pk)


@pytest.mark.parametrize("test", stats.TESTS)
def test_a_dataset_ranks_into_its_three_tiers_with_every_test(test):
    dataset = tiered_dataset()
    ranking = ranked(input_kind="dataset", dataset=dataset, test=test, n_resamples=500, seed=1)
    assert ranking.status == "done", ranking.error
    result = ranking.result["ranking"]
    means = {system: float(np.mean(v)) for system, v in tiered_scores().items()}
    assert result["systems"] == sorted(means, key=means.__getitem__, reverse=True)
    assert result["means"] == pytest.approx(sorted(means.values(), reverse=True))
    tiers = [set(result["systems"][k : k + 2]) for k in (0, 2, 4)]
    assert tiers == [{"alpha", "beta"}, {"gamma", "delta"}, {"eps", "zeta"}]
    assert result["clusters"] == [1, 1, 2, 2, 3, 3]
    assert result["rank_ranges"] == [[1, 2], [1, 2], [3, 4], [3, 4], [5, 6], [5, 6]]
    assert ranking.result["settings"]["test"] == test
    # Rows follow the dataset's columns (its systems by name).
    assert ranking.input_systems == sorted(TIERS) and ranking.score_matrix().shape == (6, 60)


def test_the_stored_result_is_rank_systems_on_the_dataset_matrix():
    dataset = tiered_dataset()
    ranking = ranked(input_kind="dataset", dataset=dataset, test="permutation", pairs="adjacent",
                     n_resamples=300, alpha=0.01, holm=True, seed=7)  # fmt: skip
    columns = tiered_scores()
    scores = np.array([columns[system] for system in sorted(TIERS)])
    assert ranking.input_systems == sorted(TIERS)
    expected = stats.rank_systems(
        scores, sorted(TIERS), test="permutation", pairs="adjacent", n_resamples=300,
        alpha=0.01, holm_correction=True, rng=np.random.default_rng(7),
    ).as_dict()  # fmt: skip
    assert ranking.result["ranking"] == expected
    settings = ranking.result["settings"]
    assert (settings["pairs"], settings["n_resamples"], settings["alpha"], settings["holm"],
            settings["seed"]) == ("adjacent", 300, 0.01, True, 7)  # fmt: skip
    low, high = ranking.result["intervals"][0]
    assert low < expected["means"][0] < high


def test_references_are_left_out_unless_asked_and_a_never_scored_system_is_noted():
    scores = {"mt-a": [70, 72, 75, 71], "mt-b": [50, 52, 55, 51], "refA": [90, 91, 92, 93],
              "mt-c": [None, None, None, None]}  # fmt: skip
    dataset = make_dataset("refs", dataset_rows(scores))
    plain = ranked(input_kind="dataset", dataset=dataset)
    assert plain.result["ranking"]["systems"] == ["mt-a", "mt-b"]
    assert plain.result["input"]["notes"] == [
        "human references left out: refA", "left out (no score): mt-c"
    ]  # fmt: skip
    with_refs = ranked(input_kind="dataset", dataset=dataset, include_references=True)
    assert with_refs.result["ranking"]["systems"] == ["refA", "mt-a", "mt-b"]


def test_a_per_system_extra_field_can_be_the_score():
    scores = {"a": [10.0, 20.0, 30.0], "b": [30.0, 40.0, 50.0]}
    comet = [{"a": 0.9, "b": 0.1}, {"a": 0.8, "b": 0.2}, {"a": 0.7, "b": None}]
    dataset = make_dataset("metric", dataset_rows(scores, comet=comet))
    ranking = ranked(input_kind="dataset", dataset=dataset, score="comet")
    assert ranking.result["ranking"]["systems"] == ["a", "b"]
    assert ranking.result["ranking"]["n_segments"] == [3, 2]
    assert ranking.result["ranking"]["means"] == pytest.approx([0.8, 0.15])


def test_a_text_in_the_score_field_fails_the_job_naming_the_line():
    scores = {"a": [10.0, 20.0], "b": [30.0, 40.0]}
    dataset = make_dataset("bad-metric", dataset_rows(scores, comet=[{"a": 1}, {"a": "high"}]))
    ranking = ranked(input_kind="dataset", dataset=dataset, score="comet")
    assert ranking.status == "failed"
    assert ranking.error == "'comet' of line 2 has 'high' for a; a number is needed"


def test_a_dataset_score_is_also_found_by_its_release_name():
    dataset = tiered_dataset()
    dataset.import_report = {"human_score": "mqm"}
    dataset.save()
    ranking = start_ranking(input_kind="dataset", dataset=dataset, score="mqm", enqueue=False)
    assert ranking.score == "human"


@pytest.mark.parametrize(
    ("settings", "field", "message"),
    [
        ({"test": "t-test"}, "test", "must be one of wilcoxon, ranksum, permutation, bootstrap"),
        ({"pairs": "some"}, "pairs", "must be one of all, adjacent"),
        ({"n_resamples": 0}, "n_resamples", "must be between 1 and 10000"),
        ({"n_resamples": 10**9}, "n_resamples", "must be between 1 and 10000"),
        ({"alpha": 1.5}, "alpha", "must be above 0 and below 1"),
        ({"alpha": math.nan}, "alpha", "must be a number"),
        ({"seed": -1}, "seed", "must be an integer from 0 to 4611686018427387904"),
        ({"language_pair": "xx-yy"}, "language_pair", "tiers has no language pair 'xx-yy' (en-de)"),
        ({"score": "comet"}, "score", "tiers en-de has no score 'comet' (scores: human)"),
        ({"dataset": None}, "dataset", "choose the dataset to rank"),
        ({"input_kind": "spreadsheet"}, "input_kind",
         "must be one of dataset, campaign, version, version_qe"),
        ({"name": "x" * 201}, "name", "must be at most 200 characters"),
    ],
)  # fmt: skip
def test_bad_settings_are_refused_by_field_and_nothing_is_written(
    settings, field, message, sent_tasks
):
    arguments = {"input_kind": "dataset", "dataset": tiered_dataset()} | settings
    with pytest.raises(RankingError) as refused:
        start_ranking(**arguments)
    assert refused.value.errors == {field: message}
    assert not SystemRanking.objects.exists() and sent_tasks == []


def test_a_dataset_with_several_pairs_needs_one_chosen():
    rows = dataset_rows(tiered_scores(), "en-de") + dataset_rows(tiered_scores(), "en-cs")
    dataset = make_dataset("two-pairs", rows)
    with pytest.raises(RankingError) as refused:
        start_ranking(input_kind="dataset", dataset=dataset)
    assert refused.value.errors == {
        "language_pair": "two-pairs has several language pairs (en-cs, en-de): choose one"
    }
    ranking = ranked(input_kind="dataset", dataset=dataset, language_pair="en-cs")
    assert ranking.result["input"]["description"] == "two-pairs en-cs"


def test_starting_queues_the_first_round_by_name(sent_tasks, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        ranking = start_ranking(input_kind="dataset", dataset=tiered_dataset())
    assert sent_tasks == [
        ("ranking.advance_ranking", (ranking.pk, 0), {"queue": "default", "countdown": None})
    ]
    assert ranking.status == "queued" and ranking.name == "tiers · wilcoxon"


def test_a_cancelled_ranking_does_not_run_and_cannot_be_cancelled_twice():
    ranking = start_ranking(input_kind="dataset", dataset=tiered_dataset(), enqueue=False)
    services.cancel_ranking(ranking)
    assert services.run_in_foreground(ranking.pk).status == "cancelled"
    with pytest.raises(services.RankingStateError, match="a cancelled ranking cannot be"):
        services.cancel_ranking(ranking)


def test_a_round_held_by_a_live_lease_waits():
    ranking = start_ranking(input_kind="dataset", dataset=tiered_dataset(), enqueue=False)
    SystemRanking.objects.filter(pk=ranking.pk).update(
        claimed_by="other", lease_expires_at=timezone.now() + timedelta(minutes=5)
    )
    outcome = services.advance_ranking(ranking.pk, 0, worker="me")
    assert outcome.status == "busy" and outcome.retry_in > 200
    assert SystemRanking.objects.get(pk=ranking.pk).status == "queued"


# --- campaigns -----------------------------------------------------------------------------


def _campaign(systems_scores: dict[str, list[int]]):
    n = len(next(iter(systems_scores.values())))
    items = [
        {"doc_id": f"d{i // 3}", "seg_id": i, "source": f"source {i}", "target": f"{s} {i}",
         "system": s}
        for i in range(n)
        for s in systems_scores
    ]  # fmt: skip
    return create_campaign(
        "Rank me", "esa", items, src_lang="en", tgt_lang="de", overlap=3,
        qc_min_seconds_per_item=5, qc_max_fast_fraction=0.2,
    )  # fmt: skip


def _annotate(campaign, name: str, score_of, *, seconds: float) -> None:
    annotator = enrolled(campaign, name)
    now = timezone.now()
    while (item := next_item_for(annotator, campaign, now=now)) is not None:
        start_viewing(annotator, item, now=now)
        now += timedelta(seconds=seconds)
        assert item.kind == Item.Kind.REGULAR
        answer = {"spans": [], "score": score_of(item), "confirmed_low_score": True}
        submit_annotation(annotator, item, answer, now=now)
        now += timedelta(seconds=1)


def test_a_campaign_ranks_on_qc_passing_judgments_only():
    wanted = {"good": [80, 85, 90, 82, 88, 84, 86, 83], "poor": [40, 45, 42, 41, 47, 44, 43, 46]}
    campaign = _campaign(wanted)
    by_item = {(s, i): wanted[s][i] for s in wanted for i in range(8)}

    def honest(item):
        return by_item[(item.system, int(item.seg_id))]

    _annotate(campaign, "honest", honest, seconds=10)
    # A clicker rates everything the other way round, too fast to pass QC: not counted.
    _annotate(campaign, "clicker", lambda item: 100 - honest(item), seconds=1)
    ranking = ranked(input_kind="campaign", campaign=campaign, test="ranksum")
    result = ranking.result["ranking"]
    assert result["systems"] == ["good", "poor"]
    assert result["means"] == pytest.approx([np.mean(wanted["good"]), np.mean(wanted["poor"])])
    assert result["clusters"] == [1, 2]
    assert result["n_segments"] == [8, 8]
    assert ranking.result["input"]["description"] == (
        "campaign Rank me (mean score of QC-passed annotators)"
    )


def test_a_campaign_in_z_scores_standardises_each_annotator_first():
    wanted = {"good": [80, 86, 90, 82], "poor": [40, 46, 42, 44]}
    campaign = _campaign(wanted)
    by_item = {(s, i): wanted[s][i] for s in wanted for i in range(4)}
    _annotate(campaign, "a", lambda item: by_item[(item.system, int(item.seg_id))], seconds=10)
    _annotate(campaign, "b", lambda item: by_item[(item.system, int(item.seg_id))] // 2 + 10,
              seconds=10)  # fmt: skip
    ranking = ranked(input_kind="campaign", campaign=campaign, score="z", test="ranksum")
    raw = np.array(wanted["good"] + wanted["poor"], dtype=float)
    z = (raw - raw.mean()) / raw.std(ddof=1)  # both annotators' z-scores are the same here
    assert ranking.result["ranking"]["means"] == pytest.approx([z[:4].mean(), z[4:].mean()])
    # Rank-sum compares every judgment (two per item here), not the per-segment means.
    good, poor = np.tile(z[:4], 2), np.tile(z[4:], 2)
    expected = scipy_stats.mannwhitneyu(good, poor, alternative="greater").pvalue
    assert ranking.result["ranking"]["p_values"][0][1] == pytest.approx(expected)


def test_a_choice_campaign_is_refused_by_field():
    campaign = create_campaign(
        "Pick", "choice", [{"doc_id": "d", "seg_id": 1, "source": "s", "choices": ["a", "b"]}]
    )
    with pytest.raises(RankingError) as refused:
        start_ranking(input_kind="campaign", campaign=campaign)
    assert refused.value.errors == {"campaign": "campaign Pick uses choice, which has no scores"}


# --- frozen challenge-set versions --------------------------------------------------------------


def test_a_version_ranks_on_its_human_scores():
    scores = {"mt-a": [90, 85, 80, 88, 92, 87], "mt-b": [30, 35, 20, 25, 40, 33]}
    version = make_version(version_items(scores))
    ranking = ranked(input_kind="version", version=version)
    assert ranking.result["ranking"]["systems"] == ["mt-a", "mt-b"]
    assert ranking.result["ranking"]["clusters"] == [1, 2]
    assert ranking.result["input"]["description"] == "Hard set v1 (human scores)"


def test_a_version_scored_by_a_qe_engine_in_rounds(settings):
    scores = {"mt-a": [90, 85, 80, 88, 92, 87], "mt-b": [30, 35, 20, 25, 40, 33]}
    items = version_items(scores)
    version = make_version(items)
    engine = ReplayEngineFactory(name="qe")
    register_replay(
        engine,
        [{"source": i["source"], "system": s, "translation": i["translations"][s],
          "score": float(100 - scores[s][k])} for k, i in enumerate(items) for s in scores],
        src_lang="en", tgt_lang="cs",
    )  # fmt: skip
    ranking = start_ranking(input_kind="version_qe", version=version, score="qe", enqueue=False)
    services.QE_CHUNK, chunk = 5, services.QE_CHUNK
    try:
        first = services.advance_ranking(ranking.pk, 0, worker="w")
        ranking.refresh_from_db()
        assert (first.status, ranking.cells_done, ranking.cells_total) == ("more", 5, 12)
        ranking = services.run_in_foreground(ranking.pk)
    finally:
        services.QE_CHUNK = chunk
    # The QE engine thinks the other way round: mt-b comes first.
    assert ranking.result["ranking"]["systems"] == ["mt-b", "mt-a"]
    assert ranking.result["input"]["description"] == "Hard set v1 (QE: qe)"
    assert ranking.round_index == 3


def test_a_qe_input_needs_a_quality_engine():
    version = make_version(version_items({"a": [1, 2], "b": [3, 4]}))
    ReplayEngineFactory(name="mt-only", capabilities=["translate"])
    with pytest.raises(RankingError) as refused:
        start_ranking(input_kind="version_qe", version=version, score="mt-only")
    assert refused.value.errors == {
        "score": "engine mt-only is not configured as a quality estimator"
    }


def test_a_datasets_individual_judgments_feed_rank_sum_one_by_one():
    dataset = make_dataset("judged", dataset_rows({"a": [80, 70, 60], "b": [20, 30, 40]}))
    pair = dataset.language_pairs.get()
    columns = {s.name: s.column for s in pair.systems.all()}
    # (row, system, annotator, z, repeat): a's repeat of row 0 must not count.
    rows = [(0, "a", 0, 1.0, False), (0, "a", 1, 0.5, False), (1, "a", 0, 0.8, False),
            (2, "a", 1, 0.1, False), (0, "a", 0, -9.0, True), (0, "b", 1, -0.5, False),
            (1, "b", 0, -1.0, False), (2, "b", 1, 0.2, False)]  # fmt: skip
    table = np.array(
        [(r, columns[s], a, np.nan, z, rep) for r, s, a, z, rep in rows], dtype=JUDGMENT_DTYPE
    )
    pair.judgments, pair.n_judgments = table_to_bytes(table), len(rows)
    pair.save()
    assert inputs.dataset_score_fields(dataset) == ["human", "z"]
    ranking = ranked(input_kind="dataset", dataset=dataset, score="z", test="ranksum")
    result = ranking.result["ranking"]
    assert result["systems"] == ["a", "b"]
    assert result["means"] == pytest.approx([np.mean([0.75, 0.8, 0.1]), np.mean([-0.5, -1, 0.2])])
    expected = scipy_stats.mannwhitneyu([1.0, 0.5, 0.8, 0.1], [-0.5, -1.0, 0.2],
                                        alternative="greater").pvalue  # fmt: skip
    assert result["p_values"][0][1] == pytest.approx(expected)
    assert ranking.result["input"]["description"] == "judged en-de (individual judgments, z)"
    with pytest.raises(RankingError) as refused:
        start_ranking(input_kind="dataset", dataset=dataset, score="raw")
    assert refused.value.errors == {"score": "judged en-de has no score 'raw' (scores: human, z)"}


def test_too_much_work_fails_the_ranking_with_the_reason(monkeypatch):
    monkeypatch.setattr(services, "MAX_RESAMPLED_CELLS", 10_000)
    dataset = tiered_dataset()
    ranking = ranked(input_kind="dataset", dataset=dataset, test="bootstrap", n_resamples=20)
    assert (ranking.status, ranking.error) == (
        "failed",
        "15 pairs × 60 segments × 20 resamples is more than one ranking computes (10,000 "
        "cells); lower n_resamples or test adjacent pairs only",
    )
    monkeypatch.setattr(services, "MAX_SYSTEMS", 5)
    ranking = ranked(input_kind="dataset", dataset=dataset)
    assert ranking.error == "6 systems to rank; a ranking takes at most 5"
