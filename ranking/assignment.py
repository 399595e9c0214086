"""Ranking's allocation policies offered to annotation campaigns (issue 42, ADR 0051).

Annotation keeps a registry of assignment policies and knows none of them;
:func:`register_policies` (``RankingConfig.ready``) registers ``uniform``, ``pearmut`` and
``settle`` of :mod:`ranking.allocation` through :class:`AllocationAdapter`, which turns the
campaign's cells (:class:`annotation.assignment.Cells`, one per regular item) into an
:class:`~ranking.allocation.AllocationState` and the policy's chosen cells back into item ids:

1. Systems and segments (``(doc_id, seg_id)``, indexed by annotation, sorted) are the rows and
   columns of the grid, so the same campaign always gives the same grid; an item is one cell
   (a repeated cell keeps its first item).
2. ``counts`` and ``sums`` are the counted human judgments; a cell above the overlap (a lapsed
   claim kept late) counts as full, with its mean kept. ``prior`` is the items' automatic
   score (NaN where none).
3. A cell is open only when its item is among the items next-item may hand out to this
   annotator now: the others get a cap equal to their count, so no policy can pick them.
4. The goal check is :class:`~ranking.allocation.StoppingRule` with the history the campaign
   keeps, patience :data:`PATIENCE`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotation import assignment
from annotation.assignment import Cells, Goal, GoalReport
from ranking.allocation import (
    AllocationState,
    PearmutPolicy,
    Policy,
    SettlePolicy,
    StoppingRule,
    UniformPolicy,
)

PATIENCE = 3
"""Consecutive checks that must agree before a campaign closes itself."""


@dataclass
class Grid:
    """The campaign's cells as matrices, and the item of each cell."""

    systems: list[str]
    state: AllocationState
    item_at: np.ndarray  # (systems, segments) item id, -1 where no item

    @property
    def n_segments(self) -> int:
        return int(self.item_at.shape[1])


def build_grid(cells: Cells, open_items: Sequence[int] | None = None) -> Grid:
    """:class:`Grid` of ``cells``; every existing cell under the cap is open when
    ``open_items`` is None (the goal check), else only those items' cells."""
    shape = (len(cells.systems), len(cells.segments))
    counts = np.minimum(cells.judgments, cells.cap)
    # A cell above the cap counts as full, with its mean kept.
    sums = cells.score_sums * counts / np.maximum(cells.judgments, 1)
    grid: dict[str, np.ndarray] = {
        "item_at": np.full(shape, -1, dtype=np.int64),
        "counts": np.zeros(shape, dtype=np.intp),
        "sums": np.zeros(shape),
        "prior": np.full(shape, np.nan),
    }
    # Reversed: where items repeat a cell, the last write (the first item) is kept.
    last_first = np.arange(cells.item_ids.size)[::-1]
    at = (cells.system_of[last_first], cells.segment_of[last_first])
    values = {"item_at": cells.item_ids, "counts": counts, "sums": sums, "prior": cells.priors}
    for name, column in values.items():
        grid[name][at] = column[last_first]
    cap: int | np.ndarray = cells.cap
    if open_items is not None:
        is_open = np.isin(grid["item_at"], np.asarray(open_items, dtype=np.int64))
        cap = np.where(is_open, cells.cap, grid["counts"]).astype(np.intp)
    prior = grid["prior"] if np.isfinite(grid["prior"]).any() else None
    state = AllocationState(grid["counts"], grid["sums"], cap, prior, grid["item_at"] >= 0)
    return Grid(list(cells.systems), state, grid["item_at"])


def _as_tuple(value: Any) -> Any:
    """A signature read back from JSON: lists become the tuples the stopping rule compares."""
    return tuple(_as_tuple(v) for v in value) if isinstance(value, list) else value


@dataclass(frozen=True)
class AllocationAdapter:
    """One :mod:`ranking.allocation` policy as an annotation assignment policy."""

    name: str
    label: str
    make: Callable[[Goal, int], Policy]  # (campaign goal, segments) -> policy

    def rank(
        self, cells: Cells, open_items: Sequence[int], goal: Goal, seed: Sequence[int], size: int
    ) -> list[int]:
        grid = build_grid(cells, open_items)
        rng = np.random.default_rng(list(seed))
        chosen = self.make(goal, grid.n_segments).choose(grid.state, rng, size)
        return [int(grid.item_at[system, segment]) for system, segment in chosen.tolist()]

    def check(
        self, cells: Cells, goal: Goal, history: Sequence[Any], seed: Sequence[int]
    ) -> GoalReport:
        grid = build_grid(cells)
        rule = StoppingRule(
            goal.name, goal.alpha, goal.tolerance, PATIENCE, history=[_as_tuple(h) for h in history]
        )
        result = rule.check(grid.state, np.random.default_rng(list(seed)))
        # Recorded apart from the check: its clusters are also what the page shows.
        settled = rule.record(result)
        history = [list(h) for h in rule.history[-PATIENCE:]]
        return GoalReport(settled, history, _systems(grid, result.clusters))


def _systems(grid: Grid, clusters: np.ndarray) -> list[dict[str, Any]]:
    """The systems best first: mean counted human score, cluster, counted judgments."""
    means = grid.state.system_means()
    judged = grid.state.counts.sum(axis=1)
    order = np.argsort(-np.nan_to_num(means, nan=-np.inf), kind="stable")
    return [
        {
            "system": grid.systems[i],
            "mean": None if np.isnan(means[i]) else round(float(means[i]), 2),
            "cluster": int(clusters[i]),
            "judgments": int(judged[i]),
        }
        for i in order.tolist()
    ]


def _cold_segments(n_segments: int) -> int:
    # The replay's default (10 whole segments) on a campaign of a few dozen segments would be
    # the whole campaign: a fifth of them, from 2 to 10.
    return min(10, max(2, n_segments // 5))


POLICIES = (
    AllocationAdapter(
        "uniform",
        "Uniform (balanced over systems)",
        lambda goal, n: UniformPolicy(),
    ),
    AllocationAdapter(
        "pearmut",
        "Pearmut (1/(rank + 1) after a warm-up)",
        lambda goal, n: PearmutPolicy(),
    ),
    AllocationAdapter(
        "settle",
        "Settle (the unresolved pairs the goal needs)",
        lambda goal, n: SettlePolicy(
            goal=goal.name,
            alpha=goal.alpha,
            tolerance=goal.tolerance,
            cold_segments=_cold_segments(n),
        ),
    ),
)


def register_policies() -> None:
    for policy in POLICIES:
        assignment.register(policy)
