"""Write use-cases of replay runs: start one, run its rounds, cancel it.

* :func:`start_replay` checks every setting and reads the dataset pair (a refusal names the field
  and why, nothing is written), keeps the recorded scores on the row and queues round 0.
* :func:`advance_replay` is one round (the Celery task calls it; ``run_in_foreground`` runs them
  all): round 0 first ranks the full data (the reference every checkpoint is measured against)
  and measures how often a bootstrap resample of the segments gives its top cluster again;
  round k replays every policy over the k-th chunk of seeds (``ranking.replay.replay_many``,
  seeded by the seed itself, so a round run again gives the same traces); the last round writes
  the result. A killed worker loses at most the round in flight.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction

import rounds
from ranking import allocation, replay
from ranking.inputs import InputError, dataset_judgments
from ranking.replays.models import ReplayRun
from ranking.validators import is_integer_in
from rounds import JobConfigError

__all__ = [
    "ADVANCE_TASK",
    "DEFAULT_POLICIES",
    "LIMITS",
    "ReplayStateError",
    "advance_replay",
    "build_result",
    "cancel_replay",
    "enqueue_round",
    "recover_replays",
    "run_in_foreground",
    "start_replay",
]

logger = logging.getLogger(__name__)
ADVANCE_TASK = "ranking.advance_replay"
Status = rounds.Status

DEFAULT_POLICIES = ("uniform", "uniform_segments", "pearmut", "settle")
# Integer settings and their bounds (inclusive); a seed is a run of every policy.
LIMITS = {
    "n_seeds": (1, 1000),
    "n_checkpoints": (2, 200),
    "batch_size": (1, 10_000),
    "n_resamples": (10, 10_000),
}
# Replay runs in one round: a 15 × 600 run takes about a second, so a round stays well inside
# the task's time limit and a killed worker loses little.
RUNS_PER_ROUND = 24
# The full-data reference's permutation test, whose draws every checkpoint reuses.
REFERENCE_RESAMPLES = 1000


class ReplayStateError(RuntimeError):
    """A control that does not apply in the run's state (cancel a finished one)."""


def enqueue_round(replay_id: int, round_index: int, *, countdown: float | None = None) -> None:
    """Queue round ``round_index`` of a replay once the current transaction commits."""
    rounds.enqueue(ADVANCE_TASK, (replay_id, round_index),
                   queue=settings.CELERY_TASK_DEFAULT_QUEUE, countdown=countdown)  # fmt: skip


# --- starting --------------------------------------------------------------------------------


def _fraction(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1


def _check_policies(policies: Any) -> str | None:
    choose = f"choose one or more of {', '.join(allocation.POLICIES)}"
    if not isinstance(policies, list) or not policies:
        return choose
    unknown = [p for p in policies if p not in allocation.POLICIES]
    return f"unknown policy {unknown[0]!r}; {choose}" if unknown else None


def _check_settings(values: dict[str, Any]) -> dict[str, str]:
    errors: dict[str, str] = {}
    if values["dataset"] is None:
        errors["dataset"] = "choose the difficulty dataset to replay"
    if (problem := _check_policies(values["policies"])) is not None:
        errors["policies"] = problem
    if values["goal"] not in allocation.GOALS:
        errors["goal"] = f"must be one of {', '.join(allocation.GOALS)}"
    for field, (low, high) in LIMITS.items():
        if not is_integer_in(values[field], low, high):
            errors[field] = f"must be an integer from {low} to {high}"
    if not _fraction(values["alpha"]):
        errors["alpha"] = "must be a number above 0 and below 1"
    if not _fraction(values["tau_threshold"]):
        errors["tau_threshold"] = "must be a number above 0 and below 1"
    if len(values["name"]) > 200:
        errors["name"] = "must be at most 200 characters"
    return errors


def _read_data(values: dict[str, Any]) -> tuple[str, replay.ReplayData]:
    """The dataset pair as a replay needs it (fully crossed), or JobConfigError naming the field."""
    try:
        scored, cube = dataset_judgments(
            values["dataset"], values["language_pair"], values["score"]
        )
    except InputError as exc:
        raise JobConfigError({exc.field: str(exc)}) from None
    try:
        return scored.description, replay.ReplayData(cube, scored.systems)
    except ValueError as exc:
        raise JobConfigError({"dataset": f"{scored.description}: {exc}"}) from None


def start_replay(
    *,
    dataset: Any,
    language_pair: str = "",
    score: str = "",
    policies: list[str] | None = None,
    goal: str = "top",
    n_seeds: int = 20,
    n_checkpoints: int = 40,
    batch_size: int = 15,
    n_resamples: int = 200,
    alpha: float = 0.05,
    tau_threshold: float = 0.9,
    name: str = "",
    created_by: Any = None,
    enqueue: bool = True,
) -> ReplayRun:
    """Check the settings, read the dataset, create the run and queue its first round.

    Raises :class:`rounds.JobConfigError` naming each field at fault; nothing is written then.
    """
    values: dict[str, Any] = {
        "dataset": dataset, "language_pair": (language_pair or "").strip(),
        "score": (score or "").strip(), "goal": goal, "n_seeds": n_seeds,
        "policies": list(DEFAULT_POLICIES) if policies is None else list(policies),
        "n_checkpoints": n_checkpoints, "batch_size": batch_size, "n_resamples": n_resamples,
        "alpha": alpha, "tau_threshold": tau_threshold, "name": (name or "").strip(),
    }  # fmt: skip
    if errors := _check_settings(values):
        raise JobConfigError(errors)
    description, data = _read_data(values)
    return _create(values, description, data, created_by, enqueue)


def _create(
    values: dict[str, Any],
    description: str,
    data: replay.ReplayData,
    created_by: Any,
    enqueue: bool,
) -> ReplayRun:
    policies = list(dict.fromkeys(values["policies"]))  # each once, in the order given
    budgets = replay.checkpoint_budgets(data.total, values["n_checkpoints"])
    with transaction.atomic():
        run = ReplayRun(
            name=values["name"] or f"Replay of {description}"[:200], dataset=values["dataset"],
            language_pair=values["language_pair"], score=values["score"] or "human",
            policies=policies, goal=values["goal"], n_seeds=values["n_seeds"],
            n_checkpoints=values["n_checkpoints"], batch_size=values["batch_size"],
            n_resamples=values["n_resamples"], alpha=float(values["alpha"]),
            tau_threshold=float(values["tau_threshold"]), systems=data.systems,
            items_total=len(policies) * values["n_seeds"], created_by=created_by,
            state={
                "description": description, "segments": int(data.judgments.shape[1]),
                "judgments": data.total, "budgets": budgets.tolist(),
                "seeds_per_round": max(1, RUNS_PER_ROUND // len(policies)), "traces": [],
            },
        )  # fmt: skip
        run.set_judgment_cube(data.judgments)
        run.save()
        if enqueue:
            enqueue_round(run.pk, 0)
    return run


# --- rounds ----------------------------------------------------------------------------------


def _reference_from(stored: dict[str, Any]) -> replay.Reference:
    return replay.Reference(
        means=np.array(stored["means"], dtype=np.float64), top=frozenset(stored["top"]),
        n_clusters=stored["n_clusters"], clusters=np.array(stored["clusters"], dtype=np.intp),
        n_resamples=stored["n_resamples"], seed=stored["seed"],
    )  # fmt: skip


def _reference_record(reference: replay.Reference) -> dict[str, Any]:
    return {
        "means": reference.means.tolist(), "top": sorted(reference.top),
        "n_clusters": reference.n_clusters, "clusters": reference.clusters.tolist(),
        "n_resamples": reference.n_resamples, "seed": reference.seed,
    }  # fmt: skip


def _trace_record(trace: replay.PolicyTrace) -> dict[str, Any]:
    return {
        "policy": trace.policy, "seed": trace.seed, "tau": trace.tau.tolist(),
        "top": trace.top.tolist(), "clusters": trace.clusters.tolist(),
        "stop_budget": trace.stop_budget, "stop_top_correct": trace.stop_top_correct,
    }  # fmt: skip


def _trace_from(stored: dict[str, Any], budgets: np.ndarray) -> replay.PolicyTrace:
    return replay.PolicyTrace(
        policy=stored["policy"], seed=stored["seed"], budgets=budgets[: len(stored["tau"])],
        tau=np.array(stored["tau"], dtype=np.float64), top=np.array(stored["top"], dtype=bool),
        clusters=np.array(stored["clusters"], dtype=np.intp), stop_budget=stored["stop_budget"],
        stop_top_correct=stored["stop_top_correct"],
    )  # fmt: skip


def _round_seeds(run: ReplayRun) -> list[int]:
    chunk = run.state["seeds_per_round"]
    start = run.round_index * chunk
    return list(range(start, min(start + chunk, run.n_seeds)))


def _replay_round(replay_id: int, worker: str) -> dict[str, Any]:
    """One round (see the module docstring), outside any transaction."""
    run = ReplayRun.objects.get(pk=replay_id)
    data = replay.ReplayData(run.judgment_cube(), run.systems)
    stored = run.state.get("reference")
    if stored:
        reference, stability = _reference_from(stored), stored.get("stability")
    else:
        reference = replay.reference_ranking(data, alpha=run.alpha, n_resamples=REFERENCE_RESAMPLES)
        stability = replay.top_cluster_stability(data, reference, alpha=run.alpha)
    _, traces = replay.replay_many(
        data, replay.policy_specs(run.policies, run.goal), _round_seeds(run), goal=run.goal,
        alpha=run.alpha, batch_size=run.batch_size, n_resamples=run.n_resamples,
        reference=reference, n_checkpoints=run.n_checkpoints,
    )  # fmt: skip
    return {
        "reference": {**_reference_record(reference), "stability": stability},
        "traces": [_trace_record(t) for t in traces],
    }


def _commit_round(run: ReplayRun, done: dict[str, Any]) -> Status:
    """Write what a round replayed (the kernel holds the row's lock and counts the round)."""
    run.state.setdefault("reference", done["reference"])
    run.state["traces"].extend(done["traces"])
    run.items_done = len(run.state["traces"])
    status = REPLAYS.after_round(run, more=run.items_done < run.items_total)
    if status == Status.DONE:
        run.result = build_result(run)
    return status


def _ratio(value: float | None, base: float | None) -> float | None:
    if value is None or base is None or not base:
        return None
    return value / base


def _summary_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The summary table: budgets to recover the top cluster and reach tau, as ratios to uniform
    (and tau to Pearmut's sampler) on the same seeds, where those policies ran."""
    uniform, pearmut = summary.get("uniform", {}), summary.get("pearmut", {})
    rows = []
    for policy, s in summary.items():
        rows.append({
            "policy": policy, "seeds": s["seeds"],
            "top_budget": s["top_budget"], "top_reached": s["top_reached"],
            "top_vs_uniform": _ratio(s["top_budget"], uniform.get("top_budget")),
            "tau_budget": s["tau_budget"], "tau_reached": s["tau_reached"],
            "tau_vs_uniform": _ratio(s["tau_budget"], uniform.get("tau_budget")),
            "tau_vs_pearmut": _ratio(s["tau_budget"], pearmut.get("tau_budget")),
            "stop_budget": s["stop_budget"], "stopped": s["stopped"],
            "stop_top_correct": s["stop_top_correct"],
        })  # fmt: skip
    return rows


def build_result(run: ReplayRun) -> dict[str, Any]:
    """The stored result: the data, the full-data reference, the curves (mean and a 95 % band
    over seeds per policy) and the summary table."""
    state = run.state
    budgets = np.array(state["budgets"], dtype=np.intp)
    traces = [_trace_from(t, budgets) for t in state["traces"]]
    summary = replay.summarise(traces, tau_threshold=run.tau_threshold)
    reference = state["reference"]
    return {
        "data": {
            "description": state["description"], "systems": run.systems,
            "segments": state["segments"], "judgments": state["judgments"],
        },
        "reference": {
            "top_cluster": [run.systems[i] for i in reference["top"]],
            "n_clusters": reference["n_clusters"],
            # Share of bootstrap resamples of the segments with the same top cluster (None in
            # runs from before it was measured).
            "top_cluster_stability": reference.get("stability"),
            "ranking": sorted(
                ({"system": s, "mean": m, "cluster": c} for s, m, c in
                 zip(run.systems, reference["means"], reference["clusters"], strict=True)),
                key=lambda row: -math.inf if row["mean"] is None else -row["mean"],
            ),
        },
        "curves": replay.bands(traces),
        "summary": _summary_rows(summary),
    }  # fmt: skip


# The lifecycle every round-based job shares (rounds.jobs), for replay runs.
REPLAYS = rounds.LeasedJobKind(
    label="replay",
    sweep_name="replay",
    model=ReplayRun,
    work=_replay_round,
    commit=_commit_round,
    enqueue_round=enqueue_round,
    state_error=ReplayStateError,
    # A refusal of ranking.replay or ranking.allocation: the job's reason to fail.
    permanent=(ValueError,),
)
advance_replay = REPLAYS.advance
cancel_replay = REPLAYS.cancel
recover_replays = REPLAYS.recover
run_in_foreground = REPLAYS.run_in_foreground
