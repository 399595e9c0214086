"""A breaker run's lifecycle: start, rounds, pause/resume/cancel, recovery, the foreground loop.

A round (:func:`advance_run`), on the round kernel like search runs (ADR 0008, 0010):

1. claim the run with a lease (a conditional UPDATE on status, round index and lease);
2. plan and run every advancing chain's next step (``search.breaker.stepping``: engine calls
   outside any transaction, concurrent within each engine's limit);
3. in one transaction guarded by the claim: write the new steps, update the chains (selection,
   errors), the run's counters, cost and curves, advance the round index, release the claim.

A worker killed in 1–2 leaves the stored state untouched; the round is re-run (redelivery,
the worker-start sweep, or the periodic sweep once the lease expired), rebuilds the same
chats from the same stored steps, and is answered from the cache: no step is written twice
(``breaker_step_unique_index`` and the claim) and no paid answer is bought twice.
"""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction
from django.utils import timezone

import rounds
from engines.interfaces import ENGINE_ERRORS
from engines.models import Engine
from engines.selectors import cost_of_scope, queue_for_engines
from search.breaker.config import CheckedRun, check_comparison, check_run
from search.breaker.methods import steps_per_chain
from search.breaker.parsing import word_count
from search.breaker.selection import curves, select_step
from search.breaker.stepping import StepResult, new_step, plan_round, run_round
from search.models import BreakerChain, BreakerRun, BreakerStep

__all__ = [
    "ADVANCE_TASK",
    "RunStateError",
    "advance_run",
    "cancel_run",
    "enqueue_round",
    "pause_run",
    "recover_runs",
    "resume_run",
    "run_in_foreground",
    "saved_engine",
    "start_breaker_comparison",
    "start_breaker_run",
]

ADVANCE_TASK = "search.advance_breaker_run"
Status = rounds.Status


def enqueue_round(run_id: int, round_index: int, *, countdown: float | None = None) -> None:
    """Queue round ``round_index`` of a breaker run once the current transaction commits."""
    llm, targets, qe = BreakerRun.objects.values_list(
        "llm_engine__name", "targets", "qe_engines"
    ).get(pk=run_id)
    queue = queue_for_engines([llm, *targets, *qe])
    rounds.enqueue(ADVANCE_TASK, (run_id, round_index), queue=queue, countdown=countdown)


# --- Start ------------------------------------------------------------------------------------


def saved_engine(engine: Engine) -> Engine:
    """An inline engine, saved once (a comparison checks the same spec once per method)."""
    if engine.pk is not None:
        return engine
    existing = Engine.objects.filter(name=engine.name).first()
    if existing is not None:
        return existing
    engine.save()
    return engine


def _create(checked: CheckedRun, created_by) -> BreakerRun:
    fields, seeds, engines = checked
    for engine in engines:
        saved_engine(engine)
    if fields.get("llm_engine") is not None:
        fields = {**fields, "llm_engine": saved_engine(fields["llm_engine"])}
    run = BreakerRun.objects.create(**fields, created_by=created_by)
    BreakerChain.objects.bulk_create(
        BreakerChain(
            run=run,
            index=i,
            seed_text=seed.text,
            seed_ref=seed.ref,
            target_words=word_count(seed.text) if seed.text else run.target_words,
        )
        for i, seed in enumerate(seeds)
    )
    return run


def start_breaker_run(
    config: dict[str, Any], *, created_by=None, enqueue: bool = True
) -> BreakerRun:
    """Validate ``config`` (:func:`search.breaker.config.check_run`), create the run with one
    chain per item, and queue its first round on commit."""
    method = config.get("method", "") if isinstance(config, dict) else ""
    checked = check_run(config, method)
    with transaction.atomic():
        run = _create(checked, created_by)
        if enqueue:
            enqueue_round(run.pk, 0)
    return run


def start_breaker_comparison(
    config: dict[str, Any], *, created_by=None, enqueue: bool = True
) -> list[BreakerRun]:
    """One run per method of ``config["methods"]`` on the same seeds ("compare methods"),
    validated together (:func:`search.breaker.config.check_comparison`), each queued."""
    checked = check_comparison(config)
    with transaction.atomic():
        runs = [_create(each, created_by) for each in checked]
        if enqueue:
            for run in runs:
                enqueue_round(run.pk, 0)
    return runs


# --- Rounds -----------------------------------------------------------------------------------


def _stored_steps(run: BreakerRun) -> dict[int, list[BreakerStep]]:
    steps: dict[int, list[BreakerStep]] = {}
    for step in BreakerStep.objects.filter(chain__run=run).order_by("chain_id", "index"):
        steps.setdefault(step.chain_id, []).append(step)
    return steps


Stepped = tuple[list[StepResult], dict[int, list[BreakerStep]]]


def _step_chains(run_id: int, worker: str) -> Stepped:
    """Every advancing chain's next step (engine calls, no transaction), and the stored ones."""
    run = BreakerRun.objects.select_related("llm_engine").get(pk=run_id)
    chains = list(BreakerChain.objects.filter(run=run).order_by("index"))
    steps = _stored_steps(run)
    results = [] if run.money_spent else run_round(run, plan_round(run, chains, steps))
    return results, steps


def _commit(run: BreakerRun, stepped: Stepped) -> rounds.Status:
    """The round's steps and the chains' selections, on the locked run."""
    results, steps = stepped
    per_chain = steps_per_chain(run.method, run.n_steps, run.k_generations)
    chains = {c.pk: c for c in BreakerChain.objects.filter(run=run)}
    written = [new_step(r) for r in results if not r.error]
    BreakerStep.objects.bulk_create(written)
    for result in results:
        _apply(chains[result.chain_id], result, steps.get(result.chain_id, []), per_chain)
    _update_chains([chains[r.chain_id] for r in results])
    run.steps_done += len(written)
    run.cost = cost_of_scope(run.scope)
    run.curves = _curves(run)
    return _next(run, chains.values())


_CHAIN_COLUMNS = ("status", "error", "steps_done", "selected_step", "selected_quality",
                  "selected_text", "updated_at")  # fmt: skip


def _update_chains(chains: list[BreakerChain]) -> None:
    """The round's chains with one ``executemany``. ``bulk_update`` builds a CASE expression
    per column over every chain and spent ~7 ms per chain on it under cProfile
    (bench/breaker_throughput.py), a third of the platform's time in the whole run."""
    if not chains:
        return
    ops = connection.ops
    rows = [
        (chain.status, chain.error, chain.steps_done, chain.selected_step,
         chain.selected_quality, chain.selected_text,
         ops.adapt_datetimefield_value(chain.updated_at), chain.pk)
        for chain in chains
    ]  # fmt: skip
    assignments = ", ".join(f"{ops.quote_name(column)} = %s" for column in _CHAIN_COLUMNS)
    table = ops.quote_name(BreakerChain._meta.db_table)
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {table} SET {assignments} WHERE {ops.quote_name('id')} = %s", rows
        )


def _apply(chain: BreakerChain, result: StepResult, done: list[BreakerStep], per_chain: int):
    chain.updated_at = timezone.now()
    if result.error:
        chain.status, chain.error = BreakerChain.Status.FAILED, result.error[:5000]
        return
    qualities = [s.quality for s in done] + [result.quality]
    sources = [s.source for s in done] + [result.source]
    chain.steps_done = len(qualities)
    chain.selected_step = select_step(qualities)
    chain.selected_quality = qualities[chain.selected_step]
    chain.selected_text = sources[chain.selected_step]
    if chain.steps_done >= per_chain:
        chain.status = BreakerChain.Status.DONE


def _curves(run: BreakerRun) -> list[dict]:
    qualities: dict[int, list[float]] = {}
    rows = BreakerStep.objects.filter(chain__run=run).order_by("chain_id", "index")
    for chain_id, quality in rows.values_list("chain_id", "quality"):
        qualities.setdefault(chain_id, []).append(quality)
    return curves(list(qualities.values()))


def _next(run: BreakerRun, chains) -> rounds.Status:
    """What follows the round (a spent budget stops the chains still going)."""
    active = [c for c in chains if c.status == BreakerChain.Status.ACTIVE]
    if active and run.money_spent and run.status == BreakerRun.Status.RUNNING:
        BreakerChain.objects.filter(pk__in=[c.pk for c in active]).update(
            status=BreakerChain.Status.STOPPED, error="the run's money budget was spent"
        )
        run.error = f"stopped: the budget of {run.budget_money} was spent ({run.cost:.4f})"
        active = []
    return BREAKER_RUNS.after_round(run, more=bool(active))


# --- Controls -----------------------------------------------------------------------------------


class RunStateError(ValueError):
    """The action does not apply to the run in its current state."""


def _stop_chains(run: BreakerRun) -> None:
    BreakerChain.objects.filter(run=run, status=BreakerChain.Status.ACTIVE).update(
        status=BreakerChain.Status.STOPPED, error="the run was cancelled"
    )


# --- Recovery and the foreground loop --------------------------------------------------------

# The lifecycle every round-based job shares (rounds.jobs), for breaker runs.
BREAKER_RUNS = rounds.LeasedJobKind(
    label="run",
    sweep_name="breaker run",
    model=BreakerRun,
    work=_step_chains,
    commit=_commit,
    enqueue_round=enqueue_round,
    state_error=RunStateError,
    on_cancelled=_stop_chains,
    **ENGINE_ERRORS,
)
advance_run = BREAKER_RUNS.advance  # a round (see the module docstring)
pause_run = BREAKER_RUNS.pause  # stops after the round in flight; resume_run carries on
resume_run = BREAKER_RUNS.resume
cancel_run = BREAKER_RUNS.cancel
recover_runs = BREAKER_RUNS.recover
run_in_foreground = BREAKER_RUNS.run_in_foreground
