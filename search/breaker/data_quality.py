"""Data-quality statistics of a breaker run's selected texts (seed 001 §3.2, Table 2; ADR 0015).

A one-round job on the round kernel, like a breaker round (ADR 0010):

1. :func:`start_statistics` validates the engines, (re)sets the run's statistics row to queued
   with a new round index and queues the round on commit;
2. :func:`compute_statistics` claims the row with a lease, reads the selected texts and, outside
   any transaction, embeds them, asks the analyst for each text's source analysis (bounded
   re-asks; a text that fails is recorded with its reason, the others go on), scores the
   source-only difficulty if configured, and computes the pure statistics
   (``search.breaker.statistics``);
3. in one transaction guarded by the claim it writes the values, the per-text analyses, the
   chrF signature and the cost booked under the statistics' own ledger scope, and releases.

A worker killed in 2 leaves the row claimed; the sweep re-queues it when the lease runs out and
the round is answered from the engines' cache, so nothing is paid twice.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

import numpy as np
from django.db import transaction
from django.db.models import F
from django.utils import timezone

import rounds
from engines.interfaces import ENGINE_ERRORS, EngineError
from engines.models import Engine
from engines.prompts import language_name
from engines.registry import refusal, resolve
from engines.selectors import cost_by_scope, queue_for_engines
from search.breaker.analysis import analysis_prompt, parse_analysis, reask
from search.breaker.asking import Asked, ask_until_parsed
from search.breaker.services import RunStateError
from search.breaker.statistics import (
    Analysis,
    aggregate_analyses,
    chrf_diversity,
    embedding_diversity,
    word_statistics,
)
from search.models import BreakerChain, BreakerRun, BreakerStatistics, BreakerStep

__all__ = [
    "COMPUTE_TASK",
    "ComparisonStatistics",
    "StatisticsConfigError",
    "analyse_texts",
    "compute_statistics",
    "enqueue_statistics",
    "recover_statistics",
    "start_comparison_statistics",
    "start_statistics",
    "statistics_in_foreground",
]

COMPUTE_TASK = "search.compute_breaker_statistics"
Status = rounds.Status
# Roles an engine plays here: (form/API field, capability, what the error calls it).
# The capability each engine field needs.
CAPABILITIES = {"embedder": "embed", "analyst": "chat", "difficulty": "difficulty"}


class StatisticsConfigError(rounds.JobConfigError):
    """Refused engines for the statistics, by field."""


def enqueue_statistics(stats_id: int, round_index: int, *, countdown: float | None = None) -> None:
    engines = BreakerStatistics.objects.values_list(
        "embedder__name", "analyst__name", "difficulty_engine__name"
    ).get(pk=stats_id)
    queue = queue_for_engines(engines)
    rounds.enqueue(COMPUTE_TASK, (stats_id, round_index), queue=queue, countdown=countdown)


# --- Start ------------------------------------------------------------------------------------


def _engine(errors: dict[str, str], field_name: str, name: str | None) -> Engine | None:
    if not name:
        if field_name != "difficulty":
            errors[field_name] = "required: the name of an engine"
        return None
    engine = Engine.objects.filter(name=name).first()
    problem = refusal(engine, name, CAPABILITIES[field_name])
    if problem:
        errors[field_name] = problem
    return engine


def start_statistics(
    run: BreakerRun,
    *,
    embedder: str | None,
    analyst: str | None,
    difficulty: str | None = None,
    requested_by: Any = None,
    enqueue: bool = True,
) -> BreakerStatistics:
    """Queue (or re-queue) the statistics of ``run``'s selected texts with these engines."""
    errors: dict[str, str] = {}
    wanted = {"embedder": embedder, "analyst": analyst, "difficulty": difficulty}
    engines = {name: _engine(errors, name, value) for name, value in wanted.items()}
    if errors:
        raise StatisticsConfigError(errors)
    with transaction.atomic():
        locked = BreakerRun.objects.select_for_update().get(pk=run.pk)
        if (
            locked.status != BreakerRun.Status.FINISHED
            and locked.status != BreakerRun.Status.CANCELLED
        ):
            raise RunStateError(
                f"a {locked.get_status_display().lower()} run has no final texts yet; "
                "statistics are computed once it has finished"
            )
        selected = BreakerChain.objects.filter(run=run).exclude(selected_text="").count()
        if selected < 2:
            raise RunStateError(
                f"statistics need at least two selected texts (the run has {selected})"
            )
        stats, created = BreakerStatistics.objects.get_or_create(run=locked)
        if stats.is_active and not created:
            raise RunStateError("the statistics of this run are being computed")
        stats.embedder, stats.analyst = engines["embedder"], engines["analyst"]
        stats.difficulty_engine = engines["difficulty"]
        stats.max_parse_attempts = locked.max_parse_attempts
        stats.status, stats.error = BreakerStatistics.Status.QUEUED, ""
        stats.round_index += 1
        stats.requested_by = requested_by if getattr(requested_by, "pk", None) else None
        stats.finished_at = None
        stats.save()
        if enqueue:
            enqueue_statistics(stats.pk, stats.round_index)
    return stats


@dataclass(frozen=True)
class ComparisonStatistics:
    started: list[BreakerStatistics]
    skipped: dict[int, str]  # run id → why its statistics were not queued


def start_comparison_statistics(
    runs: list[BreakerRun],
    *,
    embedder: str | None,
    analyst: str | None,
    difficulty: str | None = None,
    requested_by: Any = None,
    enqueue: bool = True,
) -> ComparisonStatistics:
    """Queue the statistics of every run of a comparison with the same engines, so that
    Table 2's columns compare methods and not engines (seed 001 §3.2).

    A run that cannot have statistics now (its statistics are being computed, it selected
    fewer than two texts, it is still going) is skipped with the reason; bad engines, or no run
    left to compute, raise before anything is queued."""
    started: list[BreakerStatistics] = []
    skipped: dict[int, str] = {}
    with transaction.atomic():
        for run in runs:
            try:
                stats = start_statistics(
                    run, embedder=embedder, analyst=analyst, difficulty=difficulty,
                    requested_by=requested_by, enqueue=enqueue,
                )  # fmt: skip
            except RunStateError as exc:
                skipped[run.pk] = str(exc)
            else:
                started.append(stats)
        if not started:
            reasons = "; ".join(f"#{pk}: {why}" for pk, why in skipped.items())
            raise RunStateError(f"no run's statistics can be computed now ({reasons})")
    return ComparisonStatistics(started, skipped)


# --- The round ----------------------------------------------------------------------------------


def analyse_texts(
    stats: BreakerStatistics, texts: list[str], tgt_lang: str
) -> list[Analysis | str]:
    """Each text's analysis, or the reason it has none (seed 001 App. B, bounded re-asks)."""
    assert stats.analyst is not None
    chat = resolve(stats.analyst, "chat", scope=stats.scope)
    chats = {i: analysis_prompt(text, language_name(tgt_lang)) for i, text in enumerate(texts)}
    asked = ask_until_parsed(chat, chats, parse_analysis, reask, stats.max_parse_attempts)

    def result(outcome: Asked[Analysis]) -> Analysis | str:
        if outcome.error:
            return f"the analyst failed: {outcome.error}"
        if outcome.ok and outcome.value is not None:
            return outcome.value
        return (
            f"no usable analysis after {stats.max_parse_attempts} answers ({outcome.reason}); "
            f"last answer: {outcome.last[:200]!r}"
        )

    return [result(asked[i]) for i in range(len(texts))]


def _qe_of_selected(run: BreakerRun) -> dict[str, float]:
    """Mean score of each QE engine over the selected steps (and every target)."""
    scores: dict[str, list[float]] = defaultdict(list)
    steps = BreakerStep.objects.filter(chain__run=run, index=F("chain__selected_step"))
    for qe in steps.values_list("qe", flat=True):
        for per_engine in qe.values():
            for name, value in per_engine.items():
                scores[name].append(float(value))
    return {name: fmean(values) for name, values in sorted(scores.items())}


@dataclass
class _Computed:
    values: dict[str, Any] = field(default_factory=dict)
    texts: list[dict[str, Any]] = field(default_factory=list)
    signature: str = ""
    warning: str = ""


def _compute(stats: BreakerStatistics, run: BreakerRun) -> _Computed:
    chains = list(
        BreakerChain.objects.filter(run=run).exclude(selected_text="").order_by("index")
        .values_list("index", "selected_text", "selected_quality")
    )  # fmt: skip
    if len(chains) < 2:
        raise EngineError(
            f"statistics need at least two selected texts (found {len(chains)})", True
        )
    texts = [text for _, text, _ in chains]
    out = _Computed()
    out.values = {"texts": len(texts), **word_statistics(texts)}
    assert stats.embedder is not None
    vectors = np.asarray(resolve(stats.embedder, "embed", scope=stats.scope).embed(texts))
    out.values["diversity_embd"] = embedding_diversity(vectors)
    chrf = chrf_diversity(
        texts, max_pairs=stats.chrf_max_pairs, rng=np.random.default_rng(run.seed)
    )
    out.values.update(diversity_chrf=chrf.value, chrf_pairs=chrf.pairs, chrf_sampled=chrf.sampled)
    out.signature = chrf.signature
    analyses = analyse_texts(stats, texts, run.tgt_lang)
    good = [a for a in analyses if isinstance(a, Analysis)]
    for (index, _, _), analysis in zip(chains, analyses, strict=True):
        record: dict[str, Any] = (
            {"analysis": analysis.as_dict()}
            if isinstance(analysis, Analysis)
            else {"error": analysis}
        )
        out.texts.append({"chain": index, **record})
    out.values["analysed"] = len(good)
    if good:
        out.values.update(aggregate_analyses(good))
    if len(good) < len(texts):
        out.warning = (
            f"{len(texts) - len(good)} of {len(texts)} texts have no analysis (see each text)"
        )
    qualities = [q for _, _, q in chains if q is not None]
    out.values["quality"] = fmean(qualities) if qualities else None
    out.values["qe"] = _qe_of_selected(run)
    if stats.difficulty_engine is not None:
        estimator = resolve(stats.difficulty_engine, "difficulty", scope=stats.scope)
        estimates = estimator.estimate(texts, run.src_lang, run.tgt_lang)
        out.values["difficulty"] = {
            "engine": stats.difficulty_engine.name,
            "mean": fmean(float(v) for v in estimates),
            "on_0_100_scale": bool(getattr(estimator, "on_0_100_scale", True)),
        }
    return out


def _compute_row(stats_id: int, worker: str) -> _Computed:
    stats = BreakerStatistics.objects.select_related(
        "run", "embedder", "analyst", "difficulty_engine"
    ).get(pk=stats_id)
    return _compute(stats, stats.run)


def _commit(stats: BreakerStatistics, computed: _Computed) -> rounds.Status:
    stats.values, stats.texts = computed.values, computed.texts
    stats.chrf_signature, stats.error = computed.signature, computed.warning
    stats.cost = cost_by_scope(stats.scope)["cost"]
    stats.status, stats.finished_at = BreakerStatistics.Status.DONE, timezone.now()
    return Status.DONE


# --- Recovery and the foreground loop --------------------------------------------------------

# The lifecycle every round-based job shares (rounds.jobs), for breaker statistics.
STATISTICS = rounds.LeasedJobKind(
    label="statistics",
    sweep_name="breaker statistics",
    model=BreakerStatistics,
    work=_compute_row,
    commit=_commit,
    enqueue_round=enqueue_statistics,
    state_error=RunStateError,
    # The round number names a computation (bumped at each start): a duplicate message of a
    # finished one is stale.
    counts_rounds=False,
    **ENGINE_ERRORS,
)
compute_statistics = STATISTICS.advance  # the round (see the module docstring)
recover_statistics = STATISTICS.recover
statistics_in_foreground = STATISTICS.run_in_foreground
