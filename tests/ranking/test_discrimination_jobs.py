"""Discrimination analyses as jobs (ranking.subsets): each subject read as a full set and its
subsets, the refusals that name why, the rounds and what they store."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pytest

from challenge_sets.sources.difficulty_dataset import DifficultyDatasetSource
from difficulty.services import run_difficulty_evaluation, start_difficulty_evaluation
from ranking import discrimination as rd
from ranking.subsets import services
from ranking.subsets.models import DiscriminationAnalysis
from tests.ranking.support import make_version, tiered_dataset
from tests.ranking.support import version_items as frozen_items

pytestmark = pytest.mark.django_db

FAST = {"test": "permutation", "n_resamples": 99, "n_random": 3}


def _run(analysis: DiscriminationAnalysis) -> DiscriminationAnalysis:
    return services.run_in_foreground(analysis.pk)


def _dataset_items(dataset, fraction: float = 0.25) -> list[dict]:
    """The items a challenge set takes from the dataset (the source's own provenance)."""
    source = DifficultyDatasetSource()
    return [
        {"id": f"item-{k}", **asdict(c), "human": {}}
        for k, c in enumerate(source.candidates({"dataset": dataset.pk, "fraction": fraction}))
    ]


def test_the_oracle_curve_is_measured_round_by_round_and_stored_json_safe():
    dataset = tiered_dataset()

    analysis = services.start_analysis(
        subject_kind="hardest", dataset=dataset, estimator="oracle", fractions=[0.1, 0.5],
        seed=7, enqueue=False, **FAST,
    )  # fmt: skip
    analysis = _run(analysis)

    assert analysis.status == "done" and analysis.points_done == analysis.points_total == 3
    result = json.loads(json.dumps(analysis.result, allow_nan=False))
    (subset,) = result["subsets"]
    assert subset["label"] == "hardest by the human-score oracle" and subset["curve"]
    assert [p["fraction"] for p in subset["points"]] == [0.1, 0.5]
    assert [p["size"] for p in subset["points"]] == [6, 30]
    assert set(subset["points"][0]["random_mean"]) == set(rd.FIELDS)
    assert result["full"]["kendall_tau"] == pytest.approx(1.0)
    assert set(result["full_ranking"]["systems"][:2]) == {"alpha", "beta"}  # the top tier
    assert (
        result["settings"] | {"seed": 7, "test": "permutation", "n_random": 3}
        == (result["settings"])
    )
    # The hardest tenth: by construction the segments whose mean human score is lowest.
    means = np.nanmean(analysis.score_matrix(), axis=0)
    hardest = analysis.state["subsets"][0]["columns"][:6]
    assert sorted(hardest) == sorted(np.argsort(means, kind="stable")[:6].tolist())


def test_a_round_run_again_gives_the_same_point():
    analysis = services.start_analysis(
        subject_kind="hardest", dataset=tiered_dataset(), estimator="oracle", fractions=[0.2],
        enqueue=False, **FAST,
    )  # fmt: skip
    analysis = _run(analysis)

    again = services._measure_point(analysis, 0)

    assert again == analysis.result["subsets"][0]["points"][0]


def test_hardest_by_an_estimator_of_a_finished_dec_evaluation():
    dataset = tiered_dataset()
    evaluation = start_difficulty_evaluation(dataset, ["length"], n_bootstrap=0, enqueue=False)
    evaluation = run_difficulty_evaluation(evaluation.pk)
    assert evaluation.status == "done"

    analysis = services.start_analysis(
        subject_kind="hardest", evaluation=evaluation, estimator="length", fractions=[0.25],
        enqueue=False, **FAST,
    )  # fmt: skip

    assert analysis.dataset == dataset and analysis.evaluation == evaluation
    # Length scores every source the same ("source sentence i"): ties keep row order.
    assert analysis.state["subsets"][0]["columns"][:3] == [0, 1, 2]
    assert _run(analysis).status == "done"
    with pytest.raises(services.AnalysisError) as refused:
        services.start_analysis(subject_kind="hardest", evaluation=evaluation, estimator="rarity")
    assert "has no estimator 'rarity' (oracle, length)" in refused.value.errors["estimator"]


def test_a_version_taken_from_a_dataset_is_one_subset_of_that_dataset():
    dataset = tiered_dataset()
    version = make_version(_dataset_items(dataset))

    analysis = services.start_analysis(subject_kind="version", version=version, enqueue=False,
                                       **FAST)  # fmt: skip
    analysis = _run(analysis)

    (subset,) = analysis.result["subsets"]
    assert not subset["curve"] and [p["size"] for p in subset["points"]] == [15]
    assert analysis.result["subject"]["description"] == "Hard set v1: 15 segments of tiers en-de"
    assert analysis.result["subject"]["full_description"] == "tiers en-de: 60 segments"


def test_a_version_from_elsewhere_is_refused_naming_where_its_items_came_from():
    items = [dict(item, origin="breaker_run") for item in frozen_items({"a": [70.0, 80.0]})]
    version = make_version(items)

    with pytest.raises(services.AnalysisError) as refused:
        services.start_analysis(subject_kind="version", version=version)

    message = refused.value.errors["version"]
    assert "its 2 items come from breaker_run (2), none from a difficulty dataset" in message
    assert not DiscriminationAnalysis.objects.exists()


def test_a_version_whose_dataset_changed_is_refused():
    dataset = tiered_dataset()
    items = _dataset_items(dataset)
    items[0]["provenance"]["segment"]["id"] += 10_000  # not the segment at that row any more

    with pytest.raises(services.AnalysisError) as refused:
        services.start_analysis(subject_kind="version", version=make_version(items))

    assert "the dataset changed since the items were taken" in refused.value.errors["version"]


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"n_random": 1}, "n_random"),
        ({"fractions": [0.0]}, "fractions"),
        ({"fractions": [float("nan")]}, "fractions"),
        ({"alpha": 1.5}, "alpha"),
        ({"test": "t-test"}, "test"),
        ({"seed": -1}, "seed"),
        ({"n_resamples": True}, "n_resamples"),
        ({"estimator": ""}, "estimator"),
        ({"language_pair": "xx-yy"}, "language_pair"),
    ],
)
def test_bad_settings_are_refused_by_field_and_nothing_is_written(settings, field):
    dataset = tiered_dataset()
    arguments = {"subject_kind": "hardest", "dataset": dataset, "estimator": "oracle", **settings}

    with pytest.raises(services.AnalysisError) as refused:
        services.start_analysis(**arguments)

    assert field in refused.value.errors
    assert not DiscriminationAnalysis.objects.exists()


def test_too_much_resampling_for_one_round_is_refused(monkeypatch):
    monkeypatch.setattr(services, "MAX_RESAMPLED_CELLS", 1_000)
    with pytest.raises(services.AnalysisError) as refused:
        services.start_analysis(subject_kind="hardest", dataset=tiered_dataset(),
                                estimator="oracle", **FAST)  # fmt: skip
    assert "lower n_resamples or n_random" in refused.value.errors["n_resamples"]


def test_a_cancelled_analysis_stops_at_the_round_boundary(
    sent_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        analysis = services.start_analysis(
            subject_kind="hardest", dataset=tiered_dataset(), estimator="oracle", **FAST
        )
    services.advance_analysis(analysis.pk, 0, worker="w1")
    services.cancel_analysis(analysis)

    outcome = services.advance_analysis(analysis.pk, 1, worker="w1")

    analysis.refresh_from_db()
    assert outcome.status == "stopped" and analysis.status == "cancelled"
    assert analysis.points_done == 1 and analysis.result == {}
    with pytest.raises(services.AnalysisStateError):
        services.cancel_analysis(analysis)
    assert sent_tasks == [
        (services.ADVANCE_TASK, (analysis.pk, 0), {"queue": "default", "countdown": None})
    ]
