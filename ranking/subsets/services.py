"""Write use-cases of discrimination analyses: start one, run its rounds, cancel it.

* :func:`start_analysis` checks every setting and reads the subject (a refusal names the field
  and why, nothing is written), keeps the snapshot on the row (``ranking.subsets.models``) with
  its plan, one entry per subset size, and queues the first round.
* :func:`advance_analysis` is one round (the Celery task and the ``discriminability`` command
  both call it): round 0 ranks the systems on the full set and measures it; round k measures the
  k-th planned subset and ``n_random`` random subsets of its size (``ranking.discrimination``,
  with a generator seeded by (seed, k), so a round run again gives the same numbers); the last
  round writes the result. A killed worker loses at most the round in flight.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction

import rounds
from ranking import discrimination, stats
from ranking.inputs import InputError
from ranking.services import (
    MAX_RESAMPLED_CELLS,
    MAX_RESAMPLES,
    MAX_SEED,
    RankingError,
    RankingStateError,
    check_test_settings,
)
from ranking.subsets import inputs
from ranking.subsets.models import DiscriminationAnalysis
from ranking.validators import is_integer_in

__all__ = [
    "ADVANCE_TASK",
    "MAX_RANDOM",
    "MAX_RESAMPLES",
    "MAX_SEED",
    "AnalysisError",
    "AnalysisStateError",
    "advance_analysis",
    "cancel_analysis",
    "enqueue_round",
    "recover_analyses",
    "run_in_foreground",
    "start_analysis",
]

logger = logging.getLogger(__name__)
ADVANCE_TASK = "ranking.advance_discrimination"
Status = rounds.Status
Kind = DiscriminationAnalysis.SubjectKind

MAX_RANDOM = 200
MAX_FRACTIONS = 20
# One round (one subset size with its random subsets) stays well inside the task's time limit:
# resampled pair statistics for permutation and bootstrap (about a minute of matrix products, as
# for a ranking), scipy calls for Wilcoxon and rank-sum (about a millisecond each).
MAX_TEST_CALLS = 100_000

# An analysis is refused, and its controls refused, as a ranking's are.
AnalysisError = RankingError
AnalysisStateError = RankingStateError


# --- starting --------------------------------------------------------------------------------


def enqueue_round(analysis_id: int, round_index: int, *, countdown: float | None = None) -> None:
    """Queue round ``round_index`` of an analysis once the current transaction commits."""
    rounds.enqueue(ADVANCE_TASK, (analysis_id, round_index),
                   queue=settings.CELERY_TASK_DEFAULT_QUEUE, countdown=countdown)  # fmt: skip


def _check_fractions(fractions: Any) -> str | None:
    if not isinstance(fractions, list | tuple) or not 1 <= len(fractions) <= MAX_FRACTIONS:
        return f"give 1 to {MAX_FRACTIONS} fractions"
    for value in fractions:
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
        if number is None or not math.isfinite(number) or not 0 < number <= 1:
            return f"{value!r} is not a fraction in (0, 1]"
    return None


def _check_parameters(values: dict[str, Any], errors: dict[str, str]) -> None:
    check_test_settings(values, errors)
    if not is_integer_in(values["n_random"], 2, MAX_RANDOM):
        errors["n_random"] = f"must be an integer from 2 to {MAX_RANDOM} (a band needs two)"
    if (problem := _check_fractions(values["fractions"])) is not None:
        errors["fractions"] = problem


def _read_subject(values: dict[str, Any]) -> inputs.Subject:
    kind = values["subject_kind"]
    if kind == Kind.VERSION:
        if values["version"] is None:
            raise InputError("version", "choose the frozen version to measure")
        return inputs.version_subject(values["version"], values["language_pair"])
    if kind == Kind.HARDEST:
        evaluation = values["evaluation"]
        if values["dataset"] is None and evaluation is not None:
            values["dataset"] = evaluation.dataset
        if values["dataset"] is None:
            raise InputError("dataset", "choose the difficulty dataset (or a DEC evaluation)")
        if evaluation is not None and evaluation.dataset_id != values["dataset"].pk:
            raise InputError("evaluation", f"evaluation #{evaluation.pk} is not of this dataset")
        if not values["estimator"]:
            raise InputError("estimator", f"choose an estimator or {inputs.ORACLE!r}")
        return inputs.hardest_subject(
            values["dataset"], values["estimator"], evaluation=evaluation,
            code=values["language_pair"],
        )  # fmt: skip
    if kind == Kind.BREAKER:
        if not values["comparison"]:
            raise InputError("comparison", "choose the MT-breaker comparison")
        return inputs.breaker_subject(
            values["comparison"], values["score"] or inputs.QE, values["language_pair"]
        )
    raise InputError("subject_kind", f"must be one of {', '.join(Kind.values)}")


def _plan(subject: inputs.Subject, fractions: list[float]) -> tuple[list[list[Any]], list[str]]:
    """[subset index, fraction or None, size] per round after the first; notes on sizes left out."""
    n_segments = subject.scores.shape[1]
    plan: list[list[Any]] = []
    notes = []
    for index, subset in enumerate(subject.subsets):
        if not subset.curve:
            plan.append([index, None, len(subset.columns)])
            continue
        for fraction in sorted({float(f) for f in fractions}):
            size = min(n_segments, max(2, math.floor(fraction * n_segments + 0.5)))
            if size > len(subset.columns):
                notes.append(f"{subset.label}: {fraction:.0%} needs {size} segments, "
                             f"{len(subset.columns)} have a score")  # fmt: skip
            else:
                plan.append([index, fraction, size])
    return plan, notes


def _check_work(values: dict[str, Any], subject: inputs.Subject, plan: list[list[Any]]) -> None:
    n_systems, n_segments = subject.scores.shape
    pairs = n_systems * (n_systems - 1) // 2
    largest = max([n_segments, *(size * (1 + values["n_random"]) for _, _, size in plan)])
    if values["test"] in ("permutation", "bootstrap"):
        cells = pairs * largest * values["n_resamples"]
        if cells > MAX_RESAMPLED_CELLS:
            raise InputError(
                "n_resamples",
                f"{pairs} pairs × {largest} segments (the largest round) × "
                f"{values['n_resamples']} resamples is more than a round computes "
                f"({MAX_RESAMPLED_CELLS:,} cells): lower n_resamples or n_random",
            )
    elif 2 * pairs * (1 + values["n_random"]) > MAX_TEST_CALLS:
        raise InputError("n_random", f"{2 * pairs} one-sided tests × {1 + values['n_random']} "
                         f"subsets is more than a round runs ({MAX_TEST_CALLS:,})")  # fmt: skip


def _snapshot(subject: inputs.Subject, plan: list[list[Any]], notes: list[str]) -> dict[str, Any]:
    return {
        "subsets": [
            {"label": s.label, "curve": s.curve, "columns": s.columns} for s in subject.subsets
        ],
        "difficulty": subject.difficulty,
        "description": subject.description,
        "full_description": subject.full_description,
        "notes": subject.notes + notes,
        "gaps": subject.gaps,
        "plan": plan,
        "points": {},
    }


def start_analysis(
    *,
    subject_kind: str,
    version=None,
    dataset=None,
    evaluation=None,
    estimator: str = "",
    comparison: str = "",
    language_pair: str = "",
    score: str = "",
    test: str = "permutation",
    n_resamples: int = 1000,
    n_random: int = 20,
    alpha: float = 0.05,
    seed: int = 0,
    fractions: list[float] | None = None,
    name: str = "",
    created_by=None,
    enqueue: bool = True,
) -> DiscriminationAnalysis:
    """Check the settings, read the subject, create the analysis and queue its first round.

    Raises :class:`AnalysisError` naming each field at fault (and why a subject cannot be
    measured); nothing is written then.
    """
    values: dict[str, Any] = {
        "subject_kind": subject_kind, "version": version, "dataset": dataset,
        "evaluation": evaluation, "estimator": (estimator or "").strip(),
        "comparison": (comparison or "").strip(), "language_pair": (language_pair or "").strip(),
        "score": (score or "").strip(), "test": test, "n_resamples": n_resamples,
        "n_random": n_random, "alpha": alpha, "seed": seed, "name": name or "",
        "fractions": list(discrimination.DEFAULT_FRACTIONS) if fractions is None else fractions,
    }  # fmt: skip
    errors: dict[str, str] = {}
    _check_parameters(values, errors)
    if errors:
        raise AnalysisError(errors)
    try:
        subject = _read_subject(values)
        plan, notes = _plan(subject, values["fractions"])
        _check_work(values, subject, plan)
    except InputError as exc:
        raise AnalysisError({exc.field: str(exc)}) from None
    return _create(values, subject, plan, notes, created_by, enqueue)


def _create(
    values: dict[str, Any],
    subject: inputs.Subject,
    plan: list[list[Any]],
    notes: list[str],
    created_by: Any,
    enqueue: bool,
) -> DiscriminationAnalysis:
    kind = values["subject_kind"]
    if kind == Kind.BREAKER:
        values["score"] = values["score"] or inputs.QE
    with transaction.atomic():
        analysis = DiscriminationAnalysis(
            name=values["name"].strip() or subject.description[:200],
            subject_kind=kind,
            version=values["version"] if kind == Kind.VERSION else None,
            dataset=values["dataset"] if kind == Kind.HARDEST else None,
            evaluation=values["evaluation"] if kind == Kind.HARDEST else None,
            estimator=values["estimator"] if kind == Kind.HARDEST else "",
            comparison=values["comparison"] if kind == Kind.BREAKER else "",
            language_pair=values["language_pair"],
            score=values["score"] if kind == Kind.BREAKER else inputs.HUMAN,
            test=values["test"], n_resamples=values["n_resamples"], n_random=values["n_random"],
            alpha=float(values["alpha"]), seed=values["seed"],
            fractions=sorted({float(f) for f in values["fractions"]}),
            points_total=len(plan) + 1, systems=subject.systems,
            state=_snapshot(subject, plan, notes), created_by=created_by,
        )  # fmt: skip
        analysis.set_score_matrix(subject.scores)
        analysis.save()
        if enqueue:
            enqueue_round(analysis.pk, 0)
    return analysis


# --- rounds ----------------------------------------------------------------------------------


def _ranking_from(stored: dict[str, Any]) -> stats.Ranking:
    """The full set's ranking as round 0 stored it (None in JSON back to NaN)."""

    def floats(key: str) -> np.ndarray:
        return np.array(stored[key], dtype=np.float64)

    def ints(key: str) -> np.ndarray:
        return np.array(stored[key], dtype=np.intp)

    return stats.Ranking(
        systems=list(stored["systems"]), means=floats("means"), n_segments=ints("n_segments"),
        p_values=floats("p_values"), rank_ranges=ints("rank_ranges"), clusters=ints("clusters"),
        wins=ints("wins"), input_order=ints("input_order"),
    )  # fmt: skip


def _measure_full(analysis: DiscriminationAnalysis) -> dict[str, Any]:
    """Round 0: rank the systems on the full set and measure the full set itself."""
    scores = analysis.score_matrix()
    rng = np.random.default_rng([analysis.seed, 0])
    full = stats.rank_systems(
        scores, analysis.systems, test=analysis.test, n_resamples=analysis.n_resamples,
        alpha=analysis.alpha, rng=rng,
    )  # fmt: skip
    whole = discrimination.discrimination(
        scores, np.arange(scores.shape[1]), full=full, difficulty=_difficulty(analysis),
        test=analysis.test, rng=rng, n_resamples=analysis.n_resamples, alpha=analysis.alpha,
    )  # fmt: skip
    return {"full_ranking": full.as_dict(), "full": whole.as_dict()}


def _difficulty(analysis: DiscriminationAnalysis) -> np.ndarray:
    return np.array(analysis.state["difficulty"], dtype=np.float64)


def _measure_point(analysis: DiscriminationAnalysis, index: int) -> dict[str, Any]:
    """Round ``index + 1``: the planned subset ``index`` against random subsets of its size."""
    state = analysis.state
    subset_index, fraction, size = state["plan"][index]
    columns = state["subsets"][subset_index]["columns"][:size]
    point = discrimination.subset_point(
        analysis.score_matrix(), columns, full=_ranking_from(state["full_ranking"]),
        n_random=analysis.n_random, rng=np.random.default_rng([analysis.seed, index + 1]),
        test=analysis.test, difficulty=_difficulty(analysis), n_resamples=analysis.n_resamples,
        alpha=analysis.alpha,
    )  # fmt: skip
    if fraction is not None:  # a curve's point is placed at its nominal fraction
        point["fraction"] = fraction
    return point


def _analysis_round(analysis_id: int, worker: str) -> dict[str, Any]:
    """One round of an analysis (see the module docstring): round 0 ranks the full set, round
    ``i`` measures planned subset ``i - 1``; outside any transaction."""
    analysis = DiscriminationAnalysis.objects.get(pk=analysis_id)
    if analysis.round_index == 0:
        return _measure_full(analysis)
    index = analysis.round_index - 1
    return {"point": (index, _measure_point(analysis, index))}


def _commit_round(analysis: DiscriminationAnalysis, update: dict[str, Any]) -> Status:
    """Write what a round measured (the kernel holds the row's lock and counts the round)."""
    state = analysis.state
    if "point" in update:
        index, point = update["point"]
        state["points"][str(index)] = point
    else:
        state.update(update)
    analysis.points_done = analysis.round_index + 1
    status = ANALYSES.after_round(analysis, more=analysis.points_done < analysis.points_total)
    if status == Status.DONE:
        analysis.result = build_result(analysis)
    return status


def build_result(analysis: DiscriminationAnalysis) -> dict[str, Any]:
    """The stored result: the subject, the settings, the full set and every subset's points."""
    state = analysis.state
    subsets = [
        {"label": s["label"], "curve": s["curve"], "n_columns": len(s["columns"]), "points": []}
        for s in state["subsets"]
    ]
    for index, (subset_index, _, _) in enumerate(state["plan"]):
        subsets[subset_index]["points"].append(state["points"][str(index)])
    full_ranking = state["full_ranking"]
    return {
        "subject": {
            "kind": analysis.subject_kind, "description": state["description"],
            "full_description": state["full_description"], "systems": analysis.systems,
            "n_segments": len(state["difficulty"]), "notes": state["notes"],
        },
        "settings": {
            "test": analysis.test, "n_resamples": analysis.n_resamples,
            "n_random": analysis.n_random, "alpha": analysis.alpha, "seed": analysis.seed,
            "fractions": analysis.fractions, "score": analysis.score,
            "language_pair": analysis.language_pair, "estimator": analysis.estimator,
        },
        "full_ranking": {key: full_ranking[key] for key in ("systems", "means", "clusters")},
        "full": state["full"],
        "subsets": subsets,
        "gaps": state["gaps"],
    }  # fmt: skip


# The lifecycle every round-based job shares (rounds.jobs), for discrimination analyses.
ANALYSES = rounds.LeasedJobKind(
    label="discrimination analysis",
    sweep_name="discrimination analysis",
    model=DiscriminationAnalysis,
    work=_analysis_round,
    commit=_commit_round,
    enqueue_round=enqueue_round,
    state_error=AnalysisStateError,
    # A refusal of ranking.stats or ranking.discrimination: the job's reason to fail.
    permanent=(ValueError,),
)
advance_analysis = ANALYSES.advance
cancel_analysis = ANALYSES.cancel
recover_analyses = ANALYSES.recover
run_in_foreground = ANALYSES.run_in_foreground
