"""A search run's lifecycle: start, rounds, pause/resume/cancel, recovery and the foreground loop.

A round (:func:`advance_run`) is the unit a worker executes:

1. claim the run with a lease (a conditional UPDATE on status, round index and lease),
2. restore the bandit policy and select a batch of arms (deterministic given the stored state),
3. draw a text per arm and score it (engine calls, outside any transaction),
4. in one transaction, guarded by the claim: write the pulls, update the policy, apply human
   scores that arrived, send pulls to annotators, advance the round index, release the claim,
   and queue the next round on commit.

A worker killed anywhere in 1–3 leaves the stored state untouched; the round is re-run (by the
redelivered task, by :func:`recover_runs` when a worker starts, or by the periodic sweep once
the lease has expired), selects the same arms and draws the same texts, so its engine calls are
cache hits and the pulls are written once.

The lease, the outcome, queuing by task name and the foreground loop come from the round kernel
(:mod:`rounds`); the task adapter (``search.tasks``) decides and queues each successor.
"""

from __future__ import annotations

import json
import resource
import sys
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

import rounds
from engines.interfaces import ENGINE_ERRORS
from engines.models import Engine
from engines.registry import resolve
from engines.selectors import cost_of_scope, queue_for_engines
from search.bandit import resolve_policy
from search.bandit.base import Policy
from search.models import Pull, SearchRun
from search.runs import human_loop, state
from search.runs.config import check_config
from search.runs.samplers import Draw, draw_texts

if TYPE_CHECKING:
    from engines.adapters import ArtificialCrowdEngine

__all__ = [
    "ADVANCE_TASK",
    "advance_run",
    "cancel_run",
    "enqueue_round",
    "pause_run",
    "recover_runs",
    "restore_policy",
    "resume_run",
    "run_in_foreground",
    "start_search_run",
]

ADVANCE_TASK = "search.advance_search_run"
Status = rounds.Status


def enqueue_round(run_id: int, round_index: int, *, countdown: float | None = None) -> None:
    """Queue round ``round_index`` of a run once the current transaction commits."""
    engine = SearchRun.objects.values_list("difficulty_engine__name", flat=True).get(pk=run_id)
    queue = queue_for_engines([engine])
    rounds.enqueue(ADVANCE_TASK, (run_id, round_index), queue=queue, countdown=countdown)


def start_search_run(config: dict[str, Any], *, created_by=None, enqueue: bool = True) -> SearchRun:
    """Validate ``config`` (:func:`search.runs.config.check_config`), create the run with its
    initial bandit state (and the engines its config describes inline), and queue its first
    round on commit."""
    checked = check_config(config)
    with transaction.atomic():
        for field in ("difficulty_engine", "sampler_engine"):
            engine = checked.fields.get(field)
            if engine is not None and engine.pk is None:
                engine.save()
        run = SearchRun(**checked.fields, created_by=created_by)
        assert checked.policy is not None  # check_config raised unless the policy was built
        policy, params = resolve_policy(run.algorithm, run.n_topics, run.params, run.budget_pulls)
        run.method = {"policy": policy, "params": params}
        run.save()
        # Not kept in memory: the first round may well run in another process.
        state.save_policy(run, checked.policy, keep=False)
        run.save(update_fields=["policy_state"])
        if enqueue:
            enqueue_round(run.pk, 0)
    return run


def restore_policy(run: SearchRun) -> Policy:
    """The run's policy as stored (a fresh copy; rounds use ``state.policy_for_round``)."""
    return state.load_policy(run)


# --- One round ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scored:
    automatic: float
    translations: dict
    scores: list


def _to_difficulty(quality: float, on_0_100_scale: bool) -> float:
    # Estimators are quality-like (higher = easier); a 0–100 score flips around 100, an
    # unbounded heuristic (e.g. minus the length) flips its sign.
    return 100.0 - quality if on_0_100_scale else -quality


def score_texts(run: SearchRun, draws: list[Draw]) -> list[Scored]:
    """Automatic difficulty of each drawn text (an artificial crowd also gives its parts)."""
    texts = [draw.text for draw in draws]
    estimator = resolve(run.difficulty_engine, "difficulty", run.scope)
    tgt = run.tgt_lang or None
    if run.difficulty_engine.kind == Engine.Kind.ARTIFICIAL_CROWD:
        crowd = cast("ArtificialCrowdEngine", estimator)  # the artificial crowd's adapter
        results = crowd.estimate_detailed(texts, run.src_lang, tgt)
        return [
            Scored(
                automatic=r.difficulty,
                translations=dict(r.translations),
                scores=[[t, q, float(v)] for (t, q), v in sorted(r.scores.items())],
            )
            for r in results
        ]
    qualities = estimator.estimate(texts, run.src_lang, tgt)
    on_scale = bool(getattr(estimator, "on_0_100_scale", True))
    return [Scored(_to_difficulty(float(q), on_scale), {}, []) for q in qualities]


Drawn = tuple[Policy, np.ndarray, list[Draw], list[Scored]]


def _draw_and_score(run_id: int, worker: str) -> Drawn:
    """The round's arms, a text drawn for each and its score (engine calls, no transaction)."""
    run = SearchRun.objects.select_related("difficulty_engine", "sampler_engine", "tree").get(
        pk=run_id
    )
    policy = state.policy_for_round(run)
    arms = np.empty(0, dtype=np.int64) if run.money_spent else policy.select(run.batch_size)
    # Scored pulls per arm as the bandit counts them (pending ones are this round's).
    pulled = policy.stats.counts[arms] if arms.shape[0] else None
    draws = draw_texts(run, arms, pulled) if arms.shape[0] else []
    scored = score_texts(run, draws) if draws else []
    return policy, arms, draws, scored


def _commit(run: SearchRun, drawn: Drawn) -> rounds.Status:
    """The round's pulls, the bandit's update and the human loop, on the locked run."""
    policy, arms, draws, scored = drawn
    calibration = human_loop.current_calibration(run)
    difficulties = [calibration(result.automatic) for result in scored]
    _insert_pulls(run, run.round_index, draws, scored, difficulties)
    if difficulties:
        policy.update(arms, np.array(difficulties))
    human_loop.apply_received(run, policy)
    human_loop.send_chosen(run, policy, run.round_index)
    run.pulls_done += len(difficulties)
    run.cost = cost_of_scope(run.scope)
    run.worker_memory_mb = max(run.worker_memory_mb or 0.0, _memory_mb())
    outcome = _next_step(run, policy)
    if _progress_due(run, outcome):
        _record_progress(run, policy)
    state.save_policy(run, policy)
    return outcome


_PULL_COLUMNS = (
    "run_id", "round_index", "slot", "arm", "topic_id", "sample_id", "text", "translations",
    "scores", "automatic_difficulty", "human_difficulty", "human_scores", "difficulty",
    "human_status", "created_at",
)  # fmt: skip


def _insert_pulls(run, round_index, draws, scored, difficulties) -> None:
    """The round's pulls with one ``executemany``. A round writes up to thousands of plain
    rows, and ``bulk_create`` spends ~0.4 ms per row preparing model fields; this does the same
    job (JSON columns serialized as Django would) at a small fraction of the cost."""
    if not draws:
        return
    # The timestamp adapted once, and the empty JSON of engines without parts written as
    # constants: per row, the statement should cost no more than its values.
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    rows = [
        (run.pk, round_index, slot, draw.arm, draw.topic.pk if draw.topic else None,
         draw.sample.pk if draw.sample else None, draw.text, _json(result.translations),
         _json(result.scores), result.automatic, None, "{}", difficulty, "", now)
        for slot, (draw, result, difficulty) in enumerate(
            zip(draws, scored, difficulties, strict=True)
        )
    ]  # fmt: skip
    quote = connection.ops.quote_name
    columns = ", ".join(quote(name) for name in _PULL_COLUMNS)
    placeholders = ", ".join(["%s"] * len(_PULL_COLUMNS))
    sql = f"INSERT INTO {quote(Pull._meta.db_table)} ({columns}) VALUES ({placeholders})"
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _json(value: dict | list) -> str:
    return json.dumps(value) if value else ("{}" if isinstance(value, dict) else "[]")


def _next_step(run: SearchRun, policy: Policy) -> rounds.Status:
    """Decide what follows the round and set the run's status accordingly."""
    if run.status != SearchRun.Status.RUNNING:
        return Status.STOPPED  # paused or cancelled during the round: stops at this boundary
    if not (policy.done or run.money_spent):
        return Status.MORE
    if run.human_mode != SearchRun.HumanMode.OFF and human_loop.outstanding(run):
        run.status = SearchRun.Status.WAITING
        hours = float(run.human_settings.get("timeout_hours", 72.0))
        run.human_deadline = run.human_deadline or timezone.now() + timedelta(hours=hours)
        return Status.WAITING
    _finish(run)
    return Status.DONE


def _finish(run: SearchRun) -> None:
    run.status = SearchRun.Status.FINISHED
    run.finished_at = timezone.now()


def _memory_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is in kilobytes on Linux and bytes on macOS.
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


# Points of the progress curve per run, at most (plus the first and the last round's): the
# recommendation behind a point is a pass over every pulled topic and a prior fit, so a point
# every round would make a round's cost grow with the run and dominate small rounds (issue 19).
PROGRESS_POINTS = 50


def _progress_due(run: SearchRun, outcome: rounds.Status) -> bool:
    """A point when the round ends the run's rounds (finished, waiting or stopped), on the
    first round, and then once at least 1/PROGRESS_POINTS of the budget was pulled since the
    last point."""
    if outcome != Status.MORE or not run.history:
        return True
    step = max(1, run.budget_pulls // PROGRESS_POINTS)
    return run.pulls_done - int(run.history[-1]["pulls"]) >= step


def _record_progress(run: SearchRun, policy: Policy) -> None:
    """Append the round's point of the progress curve and refresh the result summary."""
    top = policy.top_k()
    estimates = policy.estimates(top)
    top_mean = float(np.nanmean(estimates.mean)) if top.shape[0] else None
    truth = oracle = None
    if run.sampler == SearchRun.Sampler.SYNTHETIC:
        world = resolve(run.difficulty_engine, "world")
        truth = float(world.value_of(top)) if top.shape[0] else None
        # Fixed for the run; computed once (a pass over every topic of the world).
        oracle = (run.result or {}).get("oracle_top_k_mean")
        if oracle is None:
            oracle = float(world.value_of(world.oracle_top_k(run.k)))
    run.history = [
        *run.history,
        {"pulls": run.pulls_done, "top_k_mean": top_mean, "true_top_k_mean": truth,
         "cost": float(run.cost)},
    ]  # fmt: skip
    run.result = {
        "top_k": [int(t) for t in top],
        "top_k_mean": top_mean,
        "true_top_k_mean": truth,
        "oracle_top_k_mean": oracle,
    }


def settle(run_id: int, *, deadline_passed: bool = False) -> bool:
    """Apply human scores that arrived while no round holds the run; finish a waiting run
    whose humans are done (or whose deadline passed). False when a round holds the run (its
    commit applies them instead)."""
    with transaction.atomic():
        run = SearchRun.objects.select_for_update().get(pk=run_id)
        if run.claimed_by and run.lease_expires_at and run.lease_expires_at > timezone.now():
            return False
        policy = state.policy_for_round(run)
        applied = human_loop.apply_received(run, policy)
        if run.status == SearchRun.Status.WAITING and (
            deadline_passed or not human_loop.outstanding(run)
        ):
            _finish(run)
        elif not applied:
            return True
        _record_progress(run, policy)
        state.save_policy(run, policy)
        run.save()
    return True


# --- Controls -----------------------------------------------------------------------------------


class RunStateError(ValueError):
    """The action does not apply to the run in its current state."""


# --- Recovery and the foreground loop --------------------------------------------------------


def _settle_past_deadline() -> None:
    """Finish waiting runs past their human deadline (each sweep does, see :mod:`rounds`)."""
    for run_id in SearchRun.objects.filter(
        status=SearchRun.Status.WAITING, human_deadline__lt=timezone.now()
    ).values_list("pk", flat=True):
        settle(run_id, deadline_passed=True)


# The lifecycle every round-based job shares (rounds.jobs), for search runs.
SEARCH_RUNS = rounds.LeasedJobKind(
    label="run",
    sweep_name="search run",
    model=SearchRun,
    work=_draw_and_score,
    commit=_commit,
    enqueue_round=enqueue_round,
    state_error=RunStateError,
    also_sweep=_settle_past_deadline,
    **ENGINE_ERRORS,
)
# A round (see the module docstring); Celery's soft time limit, passed as ``interrupts``, ends
# it without failing the run: the claim is released and the round is simply run again.
advance_run = SEARCH_RUNS.advance
pause_run = SEARCH_RUNS.pause  # stops after the round in flight; resume_run carries on
resume_run = SEARCH_RUNS.resume
cancel_run = SEARCH_RUNS.cancel
recover_runs = SEARCH_RUNS.recover
run_in_foreground = SEARCH_RUNS.run_in_foreground
