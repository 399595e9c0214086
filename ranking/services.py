"""Write use-cases of rankings: start one, run its rounds on the round kernel, cancel it.

* :func:`start_ranking` checks every setting (a refusal names the field, nothing is written),
  creates the row and queues its first round.
* :func:`advance_ranking` is one round (the Celery task and the foreground command both call
  it): claim the row with a lease; for a QE input, score the next chunk of (item, system)
  translations with the engine outside any transaction and store them; once every score is in
  (at once for the other inputs), rank the systems (``ranking.stats.rank_systems``) and write
  the result, all in one transaction guarded by the claim.

A killed worker loses at most the chunk in flight: the row's matrix and ``cells_done`` say what
is scored, and the engine's response cache answers a re-run chunk.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction

import rounds
from engines.interfaces import EngineError
from engines.models import Engine
from engines.registry import refusal, resolve
from engines.selectors import queue_for_engines
from ranking import inputs, stats
from ranking.inputs import InputError, ScoredInput
from ranking.models import SystemRanking
from ranking.results import build_result

__all__ = [
    "ADVANCE_TASK",
    "MAX_RESAMPLES",
    "RankingError",
    "RankingStateError",
    "advance_ranking",
    "cancel_ranking",
    "check_test_settings",
    "enqueue_round",
    "recover_rankings",
    "run_in_foreground",
    "start_ranking",
]

logger = logging.getLogger(__name__)
ADVANCE_TASK = "ranking.advance_ranking"
Status = rounds.Status
InputKind = SystemRanking.InputKind

MAX_RESAMPLES = 10_000
MAX_SEED = 2**62
# Translations a QE round sends to the engine: one round stays well inside the task time limit.
QE_CHUNK = 64
# Resampled pair statistics one ranking may compute (pairs × segments × resamples): about a
# minute of matrix products on one core, under the task's time limit.
MAX_RESAMPLED_CELLS = 20_000_000_000
# Wilcoxon and rank-sum call scipy once per pair and direction: 200 systems are 39,800 calls, well
# inside one round's time limit (a round cut short by it would only start again).
MAX_SYSTEMS = 200


class RankingError(rounds.JobConfigError):
    """Settings (or a source) that cannot be ranked or measured; ``errors`` maps each field to
    what is wrong with it. A discrimination analysis's refusal too."""


class RankingStateError(RuntimeError):
    """A control that does not apply in the job's state (cancel a finished one)."""


# --- starting --------------------------------------------------------------------------------


def _queue(ranking: SystemRanking) -> str:
    if ranking.input_kind == InputKind.VERSION_QE:
        return queue_for_engines([ranking.score])
    return settings.CELERY_TASK_DEFAULT_QUEUE


def enqueue_round(ranking_id: int, round_index: int, *, countdown: float | None = None) -> None:
    """Queue round ``round_index`` of a ranking once the current transaction commits."""
    ranking = SystemRanking.objects.only("input_kind", "score").get(pk=ranking_id)
    rounds.enqueue(ADVANCE_TASK, (ranking_id, round_index), queue=_queue(ranking),
                   countdown=countdown)  # fmt: skip


def check_test_settings(values: dict[str, Any], errors: dict[str, str]) -> None:
    """The settings every ranking job's test takes (test, n_resamples, alpha, seed) and its
    name: what is wrong with each, into ``errors``."""
    if values["test"] not in stats.TESTS:
        errors["test"] = f"must be one of {', '.join(stats.TESTS)}"
    resamples = values["n_resamples"]
    if isinstance(resamples, bool) or not isinstance(resamples, int):
        errors["n_resamples"] = "must be an integer"
    elif not 1 <= resamples <= MAX_RESAMPLES:
        errors["n_resamples"] = f"must be between 1 and {MAX_RESAMPLES}"
    alpha = values["alpha"]
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not math.isfinite(alpha):
        errors["alpha"] = "must be a number"
    elif not 0 < alpha < 1:
        errors["alpha"] = "must be above 0 and below 1"
    seed = values["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        errors["seed"] = f"must be an integer from 0 to {MAX_SEED}"
    if len(values["name"]) > 200:
        errors["name"] = "must be at most 200 characters"


def _check_source(values: dict[str, Any], errors: dict[str, str]) -> None:
    """The input kind's source is given (and only it), and its language pair and score exist."""
    kind = values["input_kind"]
    needed = {InputKind.DATASET: "dataset", InputKind.CAMPAIGN: "campaign",
              InputKind.VERSION: "version", InputKind.VERSION_QE: "version"}  # fmt: skip
    if kind not in needed:
        errors["input_kind"] = f"must be one of {', '.join(InputKind.values)}"
        return
    field = needed[kind]
    if values[field] is None:
        errors[field] = f"choose the {field} to rank"
        return
    try:
        if kind == InputKind.DATASET:
            pair = inputs.dataset_language_pair(values["dataset"], values["language_pair"])
            values["score"] = inputs.resolve_dataset_score(values["dataset"], pair, values["score"])
        elif kind == InputKind.CAMPAIGN:
            _check_campaign(values)
        elif kind == InputKind.VERSION:
            if values["score"] != inputs.HUMAN:
                raise InputError("score", "a version is ranked on its human scores ('human')")
            inputs.version_input(values["version"], values["language_pair"])
        else:
            _check_qe(values, errors)
    except InputError as exc:
        errors[exc.field] = str(exc)


def _check_campaign(values: dict[str, Any]) -> None:
    inputs.check_campaign(values["campaign"], values["score"])


def _check_qe(values: dict[str, Any], errors: dict[str, str]) -> None:
    name = values["score"]
    problem = refusal(Engine.objects.filter(name=name).first(), name, "quality")
    if problem:
        errors["score"] = problem
    inputs.qe_cells(values["version"], values["language_pair"])


def _default_name(values: dict[str, Any]) -> str:
    source = values["dataset"] or values["campaign"] or values["version"]
    pair = f" {values['language_pair']}" if values["language_pair"] else ""
    return f"{source}{pair} · {values['test']}"[:200]


def start_ranking(
    *,
    input_kind: str,
    dataset=None,
    campaign=None,
    version=None,
    language_pair: str = "",
    score: str = inputs.HUMAN,
    include_references: bool = False,
    test: str = "wilcoxon",
    pairs: str = "all",
    n_resamples: int = 1000,
    alpha: float = 0.05,
    holm: bool = False,
    seed: int = 0,
    name: str = "",
    created_by=None,
    enqueue: bool = True,
) -> SystemRanking:
    """Check the settings, create the ranking and (by default) queue its first round.

    Raises :class:`RankingError` naming each field at fault; nothing is written then.
    """
    values: dict[str, Any] = {
        "input_kind": input_kind, "dataset": dataset, "campaign": campaign, "version": version,
        "language_pair": (language_pair or "").strip(), "score": (score or "").strip(),
        "test": test, "pairs": pairs, "n_resamples": n_resamples, "alpha": alpha, "seed": seed,
        "name": name,
    }  # fmt: skip
    if values["input_kind"] != InputKind.VERSION_QE and not values["score"]:
        values["score"] = inputs.HUMAN
    errors: dict[str, str] = {}
    check_test_settings(values, errors)
    if values["pairs"] not in SystemRanking.Pairs.values:
        errors["pairs"] = f"must be one of {', '.join(SystemRanking.Pairs.values)}"
    _check_source(values, errors)
    if errors:
        raise RankingError(errors)
    keep = {InputKind.DATASET: "dataset", InputKind.CAMPAIGN: "campaign"}.get(
        values["input_kind"], "version"
    )
    with transaction.atomic():
        ranking = SystemRanking.objects.create(
            name=name.strip() or _default_name(values),
            input_kind=values["input_kind"],
            dataset=dataset if keep == "dataset" else None,
            campaign=campaign if keep == "campaign" else None,
            version=version if keep == "version" else None,
            language_pair=values["language_pair"],
            score=values["score"],
            include_references=include_references,
            test=test,
            pairs=pairs,
            n_resamples=n_resamples,
            alpha=float(alpha),
            holm=holm,
            seed=seed,
            created_by=created_by,
        )
        if enqueue:
            enqueue_round(ranking.pk, 0)
    return ranking


# --- rounds ----------------------------------------------------------------------------------


def _read_input(ranking: SystemRanking) -> ScoredInput:
    if ranking.input_kind == InputKind.DATASET:
        assert ranking.dataset is not None  # the check constraint
        return inputs.dataset_input(
            ranking.dataset, ranking.language_pair, ranking.score,
            include_references=ranking.include_references,
        )  # fmt: skip
    if ranking.input_kind == InputKind.CAMPAIGN:
        assert ranking.campaign is not None
        return inputs.campaign_input(ranking.campaign, ranking.language_pair, ranking.score)
    assert ranking.version is not None
    return inputs.version_input(ranking.version, ranking.language_pair)


def _settings(ranking: SystemRanking) -> dict[str, Any]:
    return {
        "input_kind": ranking.input_kind, "language_pair": ranking.language_pair,
        "score": ranking.score, "include_references": ranking.include_references,
        "test": ranking.test, "pairs": ranking.pairs, "n_resamples": ranking.n_resamples,
        "alpha": ranking.alpha, "holm": ranking.holm, "seed": ranking.seed,
    }  # fmt: skip


def _check_work(ranking: SystemRanking, scores: np.ndarray) -> None:
    n = scores.shape[0]
    if n > MAX_SYSTEMS:
        raise InputError("input", f"{n} systems to rank; a ranking takes at most {MAX_SYSTEMS}")
    if ranking.test not in ("permutation", "bootstrap"):
        return
    pairs = n * (n - 1) // 2 if ranking.pairs == "all" else n - 1
    work = pairs * scores.shape[1] * ranking.n_resamples
    if work > MAX_RESAMPLED_CELLS:
        raise InputError(
            "n_resamples",
            f"{pairs} pairs × {scores.shape[1]} segments × {ranking.n_resamples} "
            f"resamples is more than one ranking computes ({MAX_RESAMPLED_CELLS:,} cells); "
            "lower n_resamples or test adjacent pairs only",
        )


def rank(ranking: SystemRanking, scored: ScoredInput) -> dict[str, Any]:
    """The result of ranking ``scored`` with the ranking's test and parameters."""
    _check_work(ranking, scored.scores)
    ranked = stats.rank_systems(
        scored.scores,
        scored.systems,
        test=ranking.test,
        pairs=ranking.pairs,
        n_resamples=ranking.n_resamples,
        alpha=ranking.alpha,
        holm_correction=ranking.holm,
        rng=np.random.default_rng(ranking.seed),
        judgments=scored.judgments if ranking.test == "ranksum" else None,
    )
    return build_result(
        ranked, scored.scores, settings=_settings(ranking), description=scored.description,
        notes=scored.notes,
    )  # fmt: skip


# A round's work: what it read and ranked (the input, the result once every cell is scored,
# and the QE progress), written by _commit_round in the round's transaction.
RoundDone = tuple[ScoredInput, dict[str, Any] | None, int | None, int | None]


def _ranking_round(ranking_id: int, worker: str) -> RoundDone:
    """One round of a ranking (see the module docstring), outside any transaction."""
    ranking = SystemRanking.objects.select_related(
        "dataset", "campaign", "version__challenge_set"
    ).get(pk=ranking_id)
    if ranking.input_kind == InputKind.VERSION_QE:
        return _qe_round(ranking)
    scored = _read_input(ranking)
    return scored, rank(ranking, scored), None, None


def _qe_round(ranking: SystemRanking) -> RoundDone:
    """Score the next chunk of translations with the QE engine; rank once all are scored."""
    assert ranking.version is not None
    systems, keys, cells, (src, tgt) = inputs.qe_cells(ranking.version, ranking.language_pair)
    if ranking.cells_total:
        matrix = ranking.score_matrix()
    else:
        matrix = np.full((len(systems), len(keys)), np.nan)
    chunk = cells[ranking.cells_done : ranking.cells_done + QE_CHUNK]
    if chunk:
        estimator = resolve(ranking.score, "quality", scope=ranking.scope)
        values = estimator.score([(c.source, c.translation) for c in chunk], src, tgt)
        if len(values) != len(chunk):
            raise EngineError(
                f"engine {ranking.score} returned {len(values)} scores for {len(chunk)} "
                "translations", permanent=True,
            )  # fmt: skip
        for cell, value in zip(chunk, values, strict=True):
            number = float(value)
            matrix[cell.row, cell.column] = number if math.isfinite(number) else np.nan
    done = ranking.cells_done + len(chunk)
    label = f"{ranking.version.challenge_set.name} v{ranking.version.number}"
    scored = ScoredInput(systems, matrix, keys, f"{label} (QE: {ranking.score})")
    result = rank(ranking, inputs.drop_unscored(scored)) if done >= len(cells) else None
    return scored, result, done, len(cells)


def _commit_round(ranking: SystemRanking, done: RoundDone) -> Status:
    """Write what a round read and ranked (the kernel holds the row's lock)."""
    scored, result, cells_done, total = done
    ranking.input_systems = scored.systems
    ranking.set_score_matrix(scored.scores)
    ranking.cells_total = total if total is not None else int(scored.scores.size)
    ranking.cells_done = cells_done if cells_done is not None else ranking.cells_total
    status = RANKINGS.after_round(ranking, more=result is None)
    if status == Status.DONE:
        ranking.result = result
    return status


def _transient(exc: BaseException) -> bool:
    return isinstance(exc, EngineError) and not exc.permanent


# The lifecycle every round-based job shares (rounds.jobs), for rankings.
RANKINGS = rounds.LeasedJobKind(
    label="ranking",
    sweep_name="system ranking",
    model=SystemRanking,
    work=_ranking_round,
    commit=_commit_round,
    enqueue_round=enqueue_round,
    state_error=RankingStateError,
    transient=_transient,
    # An engine's refusal, an InputError or a refusal of ranking.stats: the job's reason to fail.
    permanent=(EngineError, ValueError),
)
advance_ranking = RANKINGS.advance
cancel_ranking = RANKINGS.cancel
recover_rankings = RANKINGS.recover
run_in_foreground = RANKINGS.run_in_foreground
