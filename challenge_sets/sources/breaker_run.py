"""Items from MT-breaker runs (seed 001): the text each chain selected, with its whole chain.

One run, or every run of a comparison (the methods compared on the same seeds), once it has
finished — a run that may still take steps would change under the frozen snapshot. Each
chain's selected text becomes an item with the selected step's translations; its automatic
difficulty is 100 − the selected quality (the QE scale, as for search runs' estimators).
Breaker data is read through ``search.breaker.selectors`` only.
"""

from __future__ import annotations

from typing import Any

from challenge_sets.sources.base import Candidate, Field, ItemSource, SourceError, int_param
from challenge_sets.sources.search_run import engine_snapshot
from engines.models import Engine
from search.breaker import selectors
from search.breaker.prompts import PROMPT_VERSION
from search.breaker.records import step_record
from search.models import BreakerRun

ORIGIN = "breaker_run"
MAX_CHOICES = 200


def _engines(runs: list[BreakerRun]) -> dict[str, dict[str, Any]]:
    """Snapshots of every target and QE engine the runs name, by name (one query)."""
    names = {name for run in runs for name in [*run.targets, *run.qe_engines]}
    found = {e.name: engine_snapshot(e) for e in Engine.objects.filter(name__in=names)}
    # An engine deleted since the run is still named: its model is then unknown.
    return {
        n: found.get(n) or {"name": n, "kind": None, "model": None, "params": {}} for n in names
    }


def run_snapshot(run: BreakerRun, engines: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": run.pk,
        "name": run.name,
        "comparison": run.comparison,
        "method": run.method,
        "method_label": run.get_method_display(),
        "status": run.status,
        "config": {
            "n_steps": run.n_steps,
            "k_generations": run.k_generations,
            "max_edit_share": run.max_edit_share,
            "target_words": run.target_words,
            "max_parse_attempts": run.max_parse_attempts,
            "history_batch": run.history_batch,
            "seed": run.seed,
            "seeds_from": run.seeds_from,
            "src_lang": run.src_lang,
            "tgt_lang": run.tgt_lang,
            "budget_money": str(run.budget_money) if run.budget_money is not None else None,
        },
        "engines": {
            "llm": engine_snapshot(run.llm_engine),
            "targets": [engines[name] for name in run.targets],
            "qe": [engines[name] for name in run.qe_engines],
        },
        "cost": f"{run.cost:f}",
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }


def _difficulty(quality: float | None) -> float | None:
    return round(100.0 - quality, 6) if quality is not None else None


def chain_candidate(
    run: BreakerRun, snapshot: dict[str, Any], selected: selectors.SelectedChain
) -> Candidate:
    chain = selected.chain
    by_index = {step.index: step for step in selected.steps}
    step = by_index.get(chain.selected_step) if chain.selected_step is not None else None
    seed_ref = dict(chain.seed_ref)
    return Candidate(
        source=chain.selected_text,
        src_lang=run.src_lang,
        tgt_lang=run.tgt_lang,
        origin=ORIGIN,
        origin_ref=f"breaker:{run.pk}:chain:{chain.index}",
        translations=dict(step.translations) if step is not None else {},
        automatic_difficulty=_difficulty(chain.selected_quality),
        provenance={
            "kind": ORIGIN,
            "run": snapshot,
            "chain": {"index": chain.index, "status": chain.status,
                      "target_words": chain.target_words, "steps_done": chain.steps_done},
            "selected_step": chain.selected_step,
            "steps": [step_record(s) for s in selected.steps],
            "seed_text": chain.seed_text,
            "seed_ref": seed_ref,
            "source_url": seed_ref.get("source_url") or "",
            "doc_id": seed_ref.get("doc_id") or "",
            # Runs do not store it: the version of the code that ran them, as in the run's export.
            "prompt_version": PROMPT_VERSION,
            "automatic_scores": {
                "quality": chain.selected_quality,
                "difficulty": _difficulty(chain.selected_quality),
                "qe": step.qe if step is not None else {},
            },
        },
    )  # fmt: skip


def _hardest_first(selected: selectors.SelectedChain) -> tuple[bool, float, int]:
    quality = selected.chain.selected_quality
    return (quality is None, quality if quality is not None else 0.0, selected.chain.index)


def _run_label(run: BreakerRun) -> str:
    # A comparison names its runs "<comparison> · <method label>": no need to say it twice.
    method = run.get_method_display()
    details = f"{run.status}" if method in run.name else f"{method}, {run.status}"
    return f"#{run.pk} {run.name} ({details})"


class BreakerRunSource(ItemSource):
    name = ORIGIN
    label = "MT-breaker run"
    fields = (
        Field("run", "MT-breaker run", "choice", required=False,
              help="A finished run's selected texts, one per chain…"),
        Field("comparison", "…or a whole comparison", "choice", required=False,
              help="Every run of a comparison (all must have finished)."),
        Field("hardest", "Hardest per run", "int", required=False,
              help="Only each run's N lowest-quality texts; empty for all."),
    )  # fmt: skip

    def choices(self, field_name: str) -> list[tuple[str, str]]:
        if field_name == "comparison":
            return [("", "—")] + [(name, name) for name in selectors.comparison_names()]
        return [("", "—")] + [
            (str(r.pk), _run_label(r)) for r in selectors.recent_runs(MAX_CHOICES)
        ]

    def candidates(self, params: dict[str, Any]) -> list[Candidate]:
        runs = self._runs(params)
        unfinished = [r for r in runs if not r.is_finished]
        if unfinished:
            raise SourceError([f"MT-breaker run #{r.pk} {r.name!r} is {r.status}: add its "
                               "texts once it has finished" for r in unfinished])  # fmt: skip
        hardest = int_param(params, "hardest") if params.get("hardest") not in (None, "") else 0
        engines = _engines(runs)
        candidates = []
        for run in runs:
            chains = selectors.selected_chains(run)
            if hardest:
                ranked = sorted(chains, key=_hardest_first)
                chains = sorted(ranked[:hardest], key=lambda c: c.chain.index)
            snapshot = run_snapshot(run, engines)
            candidates += [chain_candidate(run, snapshot, chain) for chain in chains]
        if not candidates:
            raise SourceError("no chain of the chosen run(s) selected a text")
        return candidates

    def _runs(self, params: dict[str, Any]) -> list[BreakerRun]:
        comparison = str(params.get("comparison") or "").strip()
        if (params.get("run") in (None, "")) == (not comparison):
            raise SourceError("choose one MT-breaker run or one comparison")
        if comparison:
            runs = selectors.comparison_runs(comparison)
            if not runs:
                raise SourceError(f"no MT-breaker comparison named {comparison!r}")
            return runs
        pk = int_param(params, "run", high=2**62)
        run = selectors.breaker_run(pk)
        if run is None:
            raise SourceError(f"no MT-breaker run #{pk}")
        return [run]
