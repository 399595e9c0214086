"""Read queries for breaker runs: access, summaries, chains with their steps, comparisons."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean
from typing import Any

from django.db.models import Avg, Count, Q, QuerySet
from django.http import Http404

from core.access import visible_or_404
from engines.selectors import cost_by_scope
from search.access import may_use_search
from search.breaker.diff import Token, word_diff
from search.breaker.methods import spec
from search.models import BreakerChain, BreakerRun, BreakerStatistics, BreakerStep

__all__ = [
    "ChainView",
    "SelectedChain",
    "StepView",
    "breaker_run",
    "chain_for_run",
    "chain_rows",
    "chain_view",
    "comparison_names",
    "comparison_rows",
    "comparison_runs",
    "cost_per_engine",
    "may_see_runs",
    "mean_selected_quality",
    "recent_runs",
    "run_for_user",
    "run_rows",
    "run_summary",
    "runs_for_user",
    "selected_chains",
    "statistics_of",
    "statistics_table",
]


may_see_runs = may_use_search  # the name ranking knows it by


def runs_for_user(user) -> QuerySet[BreakerRun]:
    return BreakerRun.objects.all() if may_use_search(user) else BreakerRun.objects.none()


def run_for_user(user, pk: int) -> BreakerRun:
    """The one permission-checked accessor for breaker runs (pages, API and exports)."""
    rows = runs_for_user(user).select_related("llm_engine", "created_by")
    return visible_or_404(rows, pk, "No such breaker run.")


def run_rows(user) -> QuerySet[BreakerRun]:
    """The run list, with each run's mean selected quality (one query)."""
    return (
        runs_for_user(user)
        .select_related("llm_engine")
        .defer("curves")
        .annotate(
            mean_selected=Avg("chains__selected_quality"),
            failed_chains=Count("chains", filter=Q(chains__status=BreakerChain.Status.FAILED)),
        )
        .order_by("-created_at", "-id")  # Meta.ordering does not apply to grouped queries
    )


def chain_for_run(run: BreakerRun, index: int) -> BreakerChain:
    try:
        return BreakerChain.objects.get(run=run, index=index)
    except BreakerChain.DoesNotExist:
        raise Http404("No such chain.") from None


def chain_rows(run: BreakerRun) -> QuerySet[BreakerChain]:
    return BreakerChain.objects.filter(run=run).order_by("index")


def cost_per_engine(run: BreakerRun) -> dict[str, Any]:
    return cost_by_scope(run.scope)


def mean_selected_quality(run: BreakerRun) -> float | None:
    return BreakerChain.objects.filter(run=run).aggregate(mean=Avg("selected_quality"))["mean"]


def run_summary(run: BreakerRun) -> dict[str, Any]:
    """The shape ``run_breaker --json`` prints."""
    selected = [
        q for q in BreakerChain.objects.filter(run=run).values_list("selected_quality", flat=True)
    ]
    known = [q for q in selected if q is not None]
    summary: dict[str, Any] = {
        "run": run.pk,
        "method": run.method,
        "status": run.status,
        "steps": run.steps_done,
        "steps_total": run.steps_total,
        "chains": len(selected),
        "failed_chains": BreakerChain.objects.filter(run=run, status="failed").count(),
        "mean_selected_quality": fmean(known) if known else None,
        "cost": float(run.cost),
    }
    if run.error:
        summary["error"] = run.error
    return summary


@dataclass(frozen=True)
class StepView:
    step: BreakerStep
    diff: list[Token]  # against the previous step (empty for step 0)
    rows: list[tuple[str, str, dict[str, float]]]  # (target, translation, QE per engine)
    selected: bool


@dataclass(frozen=True)
class ChainView:
    chain: BreakerChain
    steps: list[StepView]


def chain_view(run: BreakerRun, chain: BreakerChain) -> ChainView:
    """The chain in the App. C layout: each step's source, diff, translations and QE."""
    steps = list(BreakerStep.objects.filter(chain=chain).order_by("index"))
    views = []
    previous = ""
    iterative = spec(run.method).iterative
    for step in steps:
        diff = word_diff(previous, step.source) if previous and iterative else []
        rows = [(t, step.translations.get(t, ""), step.qe.get(t, {})) for t in run.targets]
        views.append(StepView(step, diff, rows, step.index == chain.selected_step))
        previous = step.source
    return ChainView(chain, views)


def comparison_rows(comparison: str) -> list[BreakerRun]:
    """The runs of one comparison with their mean selected quality, hardest first."""
    runs = (
        BreakerRun.objects.filter(comparison=comparison)
        .annotate(mean_selected=Avg("chains__selected_quality"))
        .order_by("mean_selected", "pk")
    )
    return list(runs)


def statistics_of(run: BreakerRun) -> BreakerStatistics | None:
    return (
        BreakerStatistics.objects.select_related("embedder", "analyst", "difficulty_engine")
        .filter(run=run)
        .first()
    )


# Table 2 of seed 001: (label, key in ``values``, decimals); a None key starts a section.
TABLE_2: list[tuple[str, str | None, int]] = [
    ("Diversity (higher is more diverse)", None, 0),
    ("Diversity (embd)", "diversity_embd", 2),
    ("Diversity (chrF)", "diversity_chrf", 2),
    ("Diversity (topics)", "unique_topics", 0),
    ("Diversity (errors)", "unique_error_modes", 0),
    ("Diversity (words)", "unique_words", 0),
    ("Complexity & style (0–100 from the analyst; lengths in words and characters)", None, 0),
    ("Grammaticality", "grammaticality", 2),
    ("Naturalness", "naturalness", 2),
    ("Word rarity", "word_rarity", 2),
    ("Syntax complexity", "syntax_complexity", 2),
    ("Avg. word count", "avg_word_count", 2),
    ("Avg. word length", "avg_word_length", 2),
    ("Quality estimation of the selected texts (lower is harder)", None, 0),
]


@dataclass(frozen=True)
class TableRow:
    label: str
    cells: list[str]
    section: bool = False


def _cell(value: Any, decimals: int) -> str:
    return "–" if value is None else f"{float(value):,.{decimals}f}"


def _difficulty_cell(difficulty: dict[str, Any]) -> str:
    # Heuristics are not on 0–100 (only their ranking means something): significant digits.
    if difficulty.get("on_0_100_scale", True):
        return _cell(difficulty["mean"], 2)
    return f"{float(difficulty['mean']):.4g}"


def statistics_table(columns: list[BreakerStatistics | None]) -> list[TableRow]:
    """Table 2 rows with one cell per column (a run's statistics, or None: not computed)."""
    values = [s.values if s and s.status == BreakerStatistics.Status.DONE else {} for s in columns]
    rows = [
        TableRow(label, [], True) if key is None
        else TableRow(label, [_cell(v.get(key), decimals) for v in values])
        for label, key, decimals in TABLE_2
    ]  # fmt: skip
    for name in sorted({name for v in values for name in v.get("qe", {})}):
        rows.append(TableRow(f"QE ({name})", [_cell(v.get("qe", {}).get(name), 2) for v in values]))
    for name in sorted({v["difficulty"]["engine"] for v in values if "difficulty" in v}):
        estimates = [v["difficulty"] if v.get("difficulty", {}).get("engine") == name else None
                     for v in values]  # fmt: skip
        rows.append(TableRow(_difficulty_section(name, estimates), [], True))
        rows.append(TableRow(name, [_difficulty_cell(e) if e else "–" for e in estimates]))
    return rows


def _difficulty_section(name: str, estimates: list[dict[str, Any] | None]) -> str:
    """A section of its own: the estimate is no QE score, and a heuristic's is not even on the
    0–100 scale of the rows around it (its values only rank the columns)."""
    if all(e.get("on_0_100_scale", True) for e in estimates if e):
        return f"Source-only difficulty estimate ({name}; 0–100, higher = easier)"
    return (
        f"Source-only difficulty estimate ({name}; its own scale, not 0–100 like the rows "
        "above: only the order of the columns means something, higher = easier)"
    )


# --- For consumers above search (challenge sets): plain reads, no user; callers check access.


def breaker_run(pk: int) -> BreakerRun | None:
    return BreakerRun.objects.select_related("llm_engine").filter(pk=pk).first()


def recent_runs(limit: int) -> list[BreakerRun]:
    return list(BreakerRun.objects.defer("curves").order_by("-created_at", "-id")[:limit])


def comparison_names() -> list[str]:
    return list(
        BreakerRun.objects.exclude(comparison="")
        .order_by("comparison")
        .values_list("comparison", flat=True)
        .distinct()
    )


def comparison_runs(comparison: str) -> list[BreakerRun]:
    """The runs of one comparison in the order they were created."""
    runs = BreakerRun.objects.select_related("llm_engine").filter(comparison=comparison)
    return list(runs.order_by("created_at", "pk"))


@dataclass(frozen=True)
class SelectedChain:
    chain: BreakerChain
    steps: list[BreakerStep]  # the whole chain, step 0 first


def selected_chains(run: BreakerRun) -> list[SelectedChain]:
    """The run's chains that selected a text, each with all its steps (two queries)."""
    chains = list(BreakerChain.objects.filter(run=run).exclude(selected_text="").order_by("index"))
    steps: dict[int, list[BreakerStep]] = {chain.pk: [] for chain in chains}
    for step in BreakerStep.objects.filter(chain__in=chains).order_by("chain_id", "index"):
        steps[step.chain_id].append(step)
    return [SelectedChain(chain, steps[chain.pk]) for chain in chains]
