"""Selecting a chain's hardest step and the run's curves (seed 001 Alg. 1, Fig. 2). Pure.

Quality is 0–100, higher = better translation; the hardest step has the lowest quality.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["curves", "lowest_per_column", "mean_quality", "running_min", "select_step"]


def mean_quality(qe: dict[str, dict[str, float]]) -> float:
    """Mean over targets of the mean over QE engines (seed 001 §3: QE engines averaged;
    §3.3 Multi: targets averaged for the selection)."""
    per_target = [sum(scores.values()) / len(scores) for scores in qe.values() if scores]
    if not per_target:
        raise ValueError("no QE scores")
    return sum(per_target) / len(per_target)


def select_step(qualities: Sequence[float]) -> int:
    """Index of the lowest quality; the earliest on ties (Alg. 1: argmin over the steps)."""
    if not qualities:
        raise ValueError("a chain with no steps has nothing to select")
    best = 0
    for i, value in enumerate(qualities):
        if value < qualities[best]:
            best = i
    return best


def running_min(qualities: Sequence[float]) -> list[float]:
    out: list[float] = []
    for value in qualities:
        out.append(value if not out else min(out[-1], value))
    return out


def curves(chains: Sequence[Sequence[float]]) -> list[dict[str, float | int]]:
    """Per step: mean quality over the chains that reached it, and the mean of each chain's
    running minimum (what the selection would give if the chains stopped there: Fig. 2 left)."""
    longest = max((len(c) for c in chains), default=0)
    minima = [running_min(c) for c in chains]
    rows: list[dict[str, float | int]] = []
    for step in range(longest):
        reached = [c[step] for c in chains if len(c) > step]
        # A chain that stopped early keeps its final minimum in the later steps' means.
        best = [m[min(step, len(m) - 1)] for m in minima if m]
        rows.append(
            {
                "step": step,
                "chains": len(reached),
                "mean": math.fsum(reached) / len(reached),
                "running_min": math.fsum(best) / len(best),
            }
        )
    return rows


def lowest_per_column(rows: Sequence[Sequence[float | None]]) -> list[int | None]:
    """For each column, the row with the lowest value (the hardest texts for that translator and
    language, seed 001 Tables 3–5); None where the column has no value. Ties: the first row."""
    width = max((len(r) for r in rows), default=0)
    lowest: list[int | None] = []
    for column in range(width):
        best: int | None = None
        for i, row in enumerate(rows):
            value = row[column] if column < len(row) else None
            if value is not None:
                current = rows[best][column] if best is not None else None
                if current is None or value < current:
                    best = i
        lowest.append(best)
    return lowest
