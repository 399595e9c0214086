"""Write use-cases for DEC evaluations of difficulty estimators (seed 002).

* :func:`start_difficulty_evaluation`: validate the estimators, create the evaluation row and
  queue its first round.
* :func:`advance_difficulty_evaluation`: one round of an evaluation (the Celery task and the
  foreground command both call it): claim the row with a lease, run units until the round's time
  budget is spent (engine calls outside any transaction), record each unit atomically.
* :func:`run_difficulty_evaluation`: every remaining round in the foreground.
* :func:`cancel_difficulty_evaluation`.

An evaluation is planned when it starts as a list of units: estimates (one per local estimator;
one per chunk of distinct sources per language pair for engine estimators), then per estimator
its DEC/Pearson/subset metrics, one significance test per pair of estimators
(:mod:`.evaluation_significance`) and per estimator its bootstrap resamples in chunks, then
``finish``, which writes the results. The plan and the set of finished units live on the row,
so a killed worker loses at most the unit in flight, and a redelivered round carries on where
the last one stopped.

A little over 500 lines on purpose: planning, running and recording units share the plan's
vocabulary (unit keys, groups, bootstrap chunks), and splitting them would scatter it.
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

import rounds
from difficulty import dec
from difficulty import estimators as est
from difficulty.models import (
    DifficultyDataset,
    DifficultyEstimate,
    DifficultyEvaluation,
    matrix_from_bytes,
    matrix_to_bytes,
)
from difficulty.selectors import pair_data
from difficulty.services import evaluation_significance as clusters
from difficulty.services.datasets import DifficultyDatasetError
from engines.selectors import queue_for_engines

Status = rounds.Status

# Distinct sources sent to an engine estimator per unit: small enough that one unit stays far
# below the task time limit even for a slow LLM, large enough to batch well.
ENGINE_CHUNK = 32
# A round stops starting new units after this long, then hands over to the next round.
ROUND_BUDGET_S = 20.0
# Work per bootstrap unit, in (scored cells + a per-correlation overhead) × resamples; about a
# second on one core.
BOOTSTRAP_WORK_PER_UNIT = 1_000_000
MAX_BOOTSTRAP = 10_000
RANDOM_SELECTION_RUNS = 10
CONFIDENCE = 0.95


def _json_safe(value: Any) -> Any:
    """NaN and infinities become null: PostgreSQL's jsonb refuses them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


# --- Evaluations: starting -------------------------------------------------------------------


def _unit_key(unit: list) -> str:
    return json.dumps(unit, separators=(",", ":"))


def _plan(
    specs: list[est.EstimatorSpec],
    distinct_per_pair: dict[str, int],
    n_bootstrap: int,
    bootstrap_chunk: int,
    tests: list[list],
) -> list[list]:
    units: list[list] = []
    for spec in specs:
        if spec.uses_engine:
            for code, n_distinct in distinct_per_pair.items():
                units += [
                    ["estimate", spec.name, code, o] for o in range(0, n_distinct, ENGINE_CHUNK)
                ]
        else:
            units.append(["estimate", spec.name, "*", 0])
    units += [["metrics", spec.name, "", 0] for spec in specs]
    units += tests
    n_chunks = math.ceil(n_bootstrap / bootstrap_chunk) if n_bootstrap else 0
    units += [["bootstrap", spec.name, "", k] for spec in specs for k in range(n_chunks)]
    units.append(["finish", "", "", 0])
    return units


def evaluation_queue(estimator_names: Iterable[str]) -> str:
    """Engine-calling evaluations go to the slow queue (DESIGN.md §6), those of a local model
    to the local-model queue (its workers keep the model loaded)."""
    engines = [
        spec.argument for spec in map(est.parse_estimator, estimator_names) if spec.uses_engine
    ]
    if not engines:
        return settings.CELERY_TASK_DEFAULT_QUEUE
    return queue_for_engines(engines)


ADVANCE_TASK = "difficulty.advance_evaluation"


def enqueue_evaluation_round(evaluation_id: int, *, countdown: float | None = None) -> None:
    """Queue the evaluation's next round once the current transaction commits."""
    names = DifficultyEvaluation.objects.values_list("estimators", flat=True).get(pk=evaluation_id)
    rounds.enqueue(
        ADVANCE_TASK, (evaluation_id,), queue=evaluation_queue(names), countdown=countdown
    )


def start_difficulty_evaluation(
    dataset: DifficultyDataset,
    estimator_names: list[str],
    *,
    subset_fraction: float = 0.25,
    seed: int = 0,
    n_bootstrap: int = 1000,
    include_references: bool = False,
    created_by=None,
    enqueue: bool = True,
) -> DifficultyEvaluation:
    """Check the estimators, create the evaluation and (by default) queue its first round."""
    names = [name.strip() for name in estimator_names if name.strip()]
    if not names:
        raise DifficultyDatasetError("choose at least one estimator")
    if len(set(names)) != len(names):
        raise DifficultyDatasetError("an estimator is listed twice")
    if not 0.0 < subset_fraction <= 1.0:
        raise DifficultyDatasetError("the subset fraction must be above 0 and at most 1")
    if not 0 <= n_bootstrap <= MAX_BOOTSTRAP:
        raise DifficultyDatasetError(f"bootstrap resamples must be between 0 and {MAX_BOOTSTRAP}")
    language_pairs = list(
        dataset.language_pairs.defer("judgments").prefetch_related("systems").order_by("code")
    )
    pairs = [(lp.src_lang, lp.tgt_lang) for lp in language_pairs]
    textless = dataset.segments.filter(source="").exists()
    try:
        specs = [est.parse_estimator(name) for name in names]
        for spec in specs:
            est.check_estimator(spec, pairs, textless=textless)
    except est.EstimatorError as exc:
        raise DifficultyDatasetError(str(exc)) from exc
    for spec in specs:
        if spec.kind == "metric" and not dataset.is_metric_field(spec.argument):
            raise DifficultyDatasetError(
                f"{spec.name}: {spec.argument!r} records where the human scores came from "
                "(item ids, judgments and how many were averaged), it estimates nothing"
            )
        if spec.kind == "metric" and spec.argument not in dataset.extra_fields:
            fields = ", ".join(dataset.extra_fields) or "none"
            raise DifficultyDatasetError(
                f"{spec.name}: the dataset has no extra field {spec.argument!r} (extra fields: "
                f"{fields})"
            )
    distinct = {}
    cells = groups = test_work = 0
    for lp in language_pairs:
        evaluated = [s for s in lp.systems.all() if include_references or not s.is_reference]
        if not evaluated:
            raise DifficultyDatasetError(f"{lp.code} has no system to evaluate")
        groups += len(evaluated)
        cells += sum(s.n_scored for s in evaluated)
        test_work += sum(s.n_scored**2 for s in evaluated)
        if any(spec.uses_engine for spec in specs):
            distinct[lp.code] = lp.segments.values("source_key").distinct().count()
    bootstrap_chunk = max(
        1, min(n_bootstrap or 1, BOOTSTRAP_WORK_PER_UNIT // (cells + 500 * groups))
    )
    tests, tests_skipped = clusters.plan_tests(names, test_work)
    plan = _plan(specs, distinct, n_bootstrap, bootstrap_chunk, tests)
    with transaction.atomic():
        evaluation = DifficultyEvaluation.objects.create(
            dataset=dataset,
            estimators=names,
            subset_fraction=subset_fraction,
            seed=seed,
            n_bootstrap=n_bootstrap,
            include_references=include_references,
            progress_total=len(plan),
            state={
                "plan": plan,
                "done": [],
                "bootstrap_chunk": bootstrap_chunk,
                "significance_skipped": tests_skipped,
            },
            created_by=created_by,
        )
        if enqueue:
            enqueue_evaluation_round(evaluation.pk)
    return evaluation


def cancel_difficulty_evaluation(evaluation: DifficultyEvaluation) -> bool:
    """Stop an evaluation that has not finished (False when it had); a round in flight stops
    at its next unit (``_record`` finds it no longer running)."""
    try:
        DEC_EVALUATIONS.cancel(evaluation)
    except DifficultyDatasetError:
        return False
    return True


# --- Evaluations: running --------------------------------------------------------------------


class _Run:
    """What one round knows about its evaluation: data loaded once, units executed lazily."""

    def __init__(self, evaluation: DifficultyEvaluation) -> None:
        self.evaluation = evaluation
        self.specs = {name: est.parse_estimator(name) for name in evaluation.estimators}
        self._blocks: dict[str, list[dec.LanguagePairBlock]] = {}

    @cached_property
    def pairs(self) -> list[est.PairData]:
        return pair_data(
            self.evaluation.dataset,
            include_references=self.evaluation.include_references,
            with_extra=any(spec.kind == "metric" for spec in self.specs.values()),
        )

    @cached_property
    def pair_by_code(self) -> dict[str, est.PairData]:
        return {pair.code: pair for pair in self.pairs}

    @cached_property
    def language_pair_ids(self) -> dict[str, int]:
        return dict(self.evaluation.dataset.language_pairs.values_list("code", "id"))

    def human_blocks(self) -> list[dec.LanguagePairBlock]:
        return [
            dec.LanguagePairBlock(p.code, p.human, np.zeros(p.n_segments), p.systems)
            for p in self.pairs
        ]

    def blocks(self, name: str) -> list[dec.LanguagePairBlock]:
        """The estimator's stored scores lined up with the human matrices."""
        if name not in self._blocks:
            rows = DifficultyEstimate.objects.filter(
                evaluation=self.evaluation, estimator=name
            ).order_by("offset")
            chunks: dict[int, list[np.ndarray]] = defaultdict(list)
            for row in rows:
                chunks[row.language_pair_id].append(matrix_from_bytes(row.values))
            blocks = []
            for pair in self.pairs:
                parts = chunks[self.language_pair_ids[pair.code]]
                if self.specs[name].uses_engine:
                    per_source = np.concatenate(parts)
                    _texts, source_of_row = pair.distinct_sources()
                    values = per_source[source_of_row]
                else:
                    (values,) = parts
                blocks.append(dec.LanguagePairBlock(pair.code, pair.human, values, pair.systems))
            self._blocks[name] = blocks
        return self._blocks[name]

    def execute(self, unit: list) -> Callable[[DifficultyEvaluation], None]:
        """Run one unit (outside any transaction); return how to record it on the locked row."""
        kind, name, code, index = unit
        evaluation = self.evaluation
        if kind == "estimate":
            spec = self.specs[name]
            if spec.uses_engine:
                pair = self.pair_by_code[code]
                texts, _rows = pair.distinct_sources()
                values = est.estimate_with_engine(
                    spec, pair, texts[index : index + ENGINE_CHUNK], f"dataset_eval:{evaluation.pk}"
                )
                arrays = [(code, index, values)]
            else:
                computed = est.compute_local(spec, self.pairs, evaluation.seed)
                arrays = [(p.code, 0, a) for p, a in zip(self.pairs, computed, strict=True)]

            def record(row: DifficultyEvaluation) -> None:
                DifficultyEstimate.objects.bulk_create(
                    DifficultyEstimate(
                        evaluation=row,
                        estimator=name,
                        language_pair_id=self.language_pair_ids[c],
                        offset=o,
                        values=matrix_to_bytes(a),
                    )
                    for c, o, a in arrays
                )

            return record
        if kind == "metrics":
            blocks = self.blocks(name)
            result = {
                "dec": dec.dec(blocks).as_dict(),
                "subset": dec.hardest_subset(
                    blocks, evaluation.subset_fraction, evaluation.dataset.perfect_score
                ).as_dict(),
            }

            def record(row: DifficultyEvaluation) -> None:
                row.state.setdefault("metrics", {})[name] = _json_safe(result)

            return record
        if kind == "bootstrap":
            chunk = evaluation.state["bootstrap_chunk"]
            count = min(chunk, evaluation.n_bootstrap - index * chunk)
            rng = est.estimator_rng(evaluation.seed, name, 1, index)
            samples = dec.bootstrap_dec(self.blocks(name), rng, count).tolist()

            def record(row: DifficultyEvaluation) -> None:
                row.state.setdefault("bootstrap", {}).setdefault(name, {})[str(index)] = _json_safe(
                    samples
                )

            return record
        if kind == "significance":
            test = clusters.test_pair(
                evaluation.seed, name, code, self.blocks(name), self.blocks(code)
            )

            def record(row: DifficultyEvaluation) -> None:
                row.state.setdefault("significance", {})[_unit_key(unit)] = _json_safe(test)

            return record
        if kind == "finish":
            return self._finish()
        raise ValueError(f"unknown unit {unit!r}")

    def _finish(self) -> Callable[[DifficultyEvaluation], None]:
        evaluation = self.evaluation
        dataset = evaluation.dataset
        human = self.human_blocks()
        rng = np.random.default_rng([evaluation.seed, 2])
        random_rows = dec.random_selection(
            human,
            rng,
            evaluation.subset_fraction,
            runs=RANDOM_SELECTION_RUNS,
            perfect=dataset.perfect_score,
        )
        full = dec.full_set_scores(human, dataset.perfect_score)

        def record(row: DifficultyEvaluation) -> None:
            estimators_out: dict[str, Any] = {}
            details: dict[str, Any] = {}
            significance = clusters.estimator_clusters(row.state, row.estimators, row.seed)
            ranks = clusters.ranks_of(significance)
            for name in row.estimators:
                metrics = row.state["metrics"][name]
                samples = [
                    np.nan if v is None else v
                    for chunk in row.state.get("bootstrap", {}).get(name, {}).values()
                    for v in chunk
                ]
                low, high = dec.percentile_interval(np.array(samples), CONFIDENCE)
                estimators_out[name] = {
                    "rank": ranks.get(name),
                    "dec": metrics["dec"]["dec"],
                    "dec_per_lp": metrics["dec"]["dec_per_lp"],
                    "pearson": metrics["dec"]["pearson"],
                    "avg_score": metrics["subset"]["avg_score"],
                    "pct_perfect": metrics["subset"]["pct_perfect"],
                }
                details[name] = {
                    "description": est.describe(self.specs[name]),
                    "group": _group(self.specs[name]),
                    "dec_ci": [low, high] if samples else None,
                    "n_bootstrap": len(samples),
                    "pearson_per_lp": metrics["dec"]["pearson_per_lp"],
                    "per_system": metrics["dec"]["per_system"],
                    "n_pairs": metrics["dec"]["n_pairs"],
                    "undefined": metrics["dec"]["undefined"],
                    "subset_per_lp": metrics["subset"]["per_lp"],
                    "subset_rows": metrics["subset"].get("rows", {}),
                }
            row.results = _json_safe(
                {
                    "estimators": estimators_out,
                    "dataset": {
                        "id": dataset.pk,
                        "name": dataset.name,
                        "n_segments": dataset.n_segments,
                        "language_pairs": {
                            p.code: {"n_segments": p.n_segments, "systems": list(p.systems)}
                            for p in self.pairs
                        },
                        "references_included": row.include_references,
                        "full_set": full.as_dict(),
                    },
                    "settings": {
                        "subset_fraction": row.subset_fraction,
                        "seed": row.seed,
                        "n_bootstrap": row.n_bootstrap,
                        "confidence": CONFIDENCE,
                        "perfect_score": dataset.perfect_score,
                    },
                    "random_selection": random_rows.as_dict(),
                    "details": details,
                    "significance": significance,
                }
            )
            row.status = DifficultyEvaluation.Status.DONE
            row.finished_at = timezone.now()
            row.claimed_by = ""
            row.lease_expires_at = None

        return record


def _group(spec: est.EstimatorSpec) -> str:
    """The row group of seed 002 Table 1 an estimator belongs to."""
    if spec.is_reference:
        return "Oracle"
    if spec.kind == "random":
        return "Random"
    if spec.kind == "metric":
        return "Dataset metric"
    if spec.kind == "llm-judge":
        return "LLM judge"
    if spec.kind == "crowd":
        return "Crowd based"
    if spec.kind == "learned":
        return "Learned"
    return "Heuristic"


def _record(evaluation_id: int, worker: str, key: str, write: Callable) -> bool:
    with transaction.atomic():
        row = DifficultyEvaluation.objects.select_for_update().get(pk=evaluation_id)
        if row.status != DifficultyEvaluation.Status.RUNNING or row.claimed_by != worker:
            return False  # cancelled, or the lease ran out and another round took over
        write(row)
        row.state["done"].append(key)
        row.progress_done = len(row.state["done"])
        if row.status == DifficultyEvaluation.Status.RUNNING:
            row.lease_expires_at = timezone.now() + DEC_EVALUATIONS.lease()
        row.save()
    return True


def _run_units(evaluation_id: int, worker: str, budget_s: float = ROUND_BUDGET_S) -> rounds.Outcome:
    """One round: the units left, in plan order, each recorded as it ends, until ``budget_s``
    is spent (the foreground run passes no limit)."""
    evaluation = DifficultyEvaluation.objects.select_related("dataset").get(pk=evaluation_id)
    run = _Run(evaluation)
    done = set(evaluation.state.get("done", []))
    started = time.monotonic()
    ran = 0
    for unit in evaluation.state["plan"]:
        key = _unit_key(unit)
        if key in done:
            continue
        if ran and time.monotonic() - started > budget_s:
            DEC_EVALUATIONS.release(evaluation_id, worker)
            return rounds.Outcome(Status.MORE)
        write = run.execute(unit)
        if not _record(evaluation_id, worker, key, write):
            return rounds.Outcome(Status.STOPPED)  # cancelled, or another worker took over
        ran += 1
    return rounds.Outcome(Status.DONE)


def run_difficulty_evaluation(
    evaluation_id: int, *, worker: str | None = None
) -> DifficultyEvaluation:
    """Run every remaining round in this process (the foreground twin of the Celery task)."""
    return DEC_EVALUATIONS.run_in_foreground(evaluation_id, worker=worker, budget_s=math.inf)


# The lifecycle every round-based job shares (rounds.jobs), for DEC evaluations (whose cancel,
# which reports a bool, stays above).
DEC_EVALUATIONS = rounds.LeasedJobKind(
    label="evaluation",
    sweep_name="DEC evaluation",
    model=DifficultyEvaluation,
    work=_run_units,
    enqueue_round=enqueue_evaluation_round,
    state_error=DifficultyDatasetError,
    numbered=False,
    permanent=(est.EstimatorError,),
)
# A round: claim the evaluation, run units until ``budget_s`` is spent, record each. Celery's
# soft time limit (``interrupts``) ends it early without failing the evaluation: the unit in
# flight is simply run again by the next round.
advance_difficulty_evaluation = DEC_EVALUATIONS.advance
recover_evaluations = DEC_EVALUATIONS.recover
