"""A ranking's stored result: ``ranking.stats.Ranking.as_dict()`` plus what the page, the
downloads and the command need around it (no Django).

The result is one JSON object::

    {"ranking": Ranking.as_dict(),          # systems in rank order, means, P, ranges, clusters
     "intervals": [[low, high], ...],        # per ranked system: a t interval of its mean
     "confidence": 0.95,
     "settings": {"test", "pairs", "n_resamples", "alpha", "holm", "seed", "score", ...},
     "input": {"description", "n_systems", "n_segments", "notes": [...]}}

The interval of a mean is Student's t over the segments the system was scored on (scipy's
``t.ppf``), ``mean ± t(1 - (1 - c) / 2, n - 1) · sd / √n``: a picture of each mean's precision
beside the plot's points, not the pairwise tests, which are what the clusters follow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats as scipy_stats

from ranking.stats import Ranking, json_safe

__all__ = ["CONFIDENCE", "RankedRow", "build_result", "mean_intervals", "ranked_rows"]

CONFIDENCE = 0.95


def mean_intervals(
    scores: NDArray[np.float64], confidence: float = CONFIDENCE
) -> NDArray[np.float64]:
    """(systems, 2) Student-t interval of each row's mean over its non-NaN cells (NaN bounds
    under two cells)."""
    x = np.asarray(scores, dtype=np.float64)
    out = np.full((x.shape[0], 2), np.nan)
    for k, row in enumerate(x):
        values = row[~np.isnan(row)]
        if values.size < 2:
            continue
        half = float(
            scipy_stats.t.ppf(1 - (1 - confidence) / 2, values.size - 1)
            * values.std(ddof=1)
            / math.sqrt(values.size)
        )
        mean = float(values.mean())
        out[k] = (mean - half, mean + half)
    return out


def build_result(
    ranking: Ranking,
    scores: NDArray[np.float64],
    *,
    settings: dict[str, Any],
    description: str,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The stored result of ranking ``scores`` (rows in input order) into ``ranking``."""
    intervals = mean_intervals(scores)
    order = ranking.input_order
    return {
        "ranking": ranking.as_dict(),
        "intervals": json_safe(intervals[order] if order.size else intervals),
        "confidence": CONFIDENCE,
        "settings": json_safe(dict(settings)),
        "input": {
            "description": description,
            "n_systems": int(scores.shape[0]),
            "n_segments": int(scores.shape[1]),
            "notes": list(notes),
        },
    }


@dataclass(frozen=True)
class RankedRow:
    """One system of a ranking as tables show it (rank order)."""

    position: int  # 1-based place in the mean order
    system: str
    mean: float | None
    n: int
    low: float | None
    high: float | None
    best_rank: int
    worst_rank: int
    cluster: int
    wins: int
    ends_cluster: bool  # a rule follows this row (the next system is in another cluster)

    @property
    def rank_range(self) -> str:
        """``3`` or ``1–4`` (an en dash, as the findings tables print it)."""
        if self.best_rank == self.worst_rank:
            return str(self.best_rank)
        return f"{self.best_rank}–{self.worst_rank}"


def ranked_rows(result: dict[str, Any]) -> list[RankedRow]:
    """The result's systems in rank order with their rank ranges and cluster rules."""
    ranking = result["ranking"]
    clusters = ranking["clusters"]
    intervals = result.get("intervals") or [[None, None]] * len(ranking["systems"])
    rows = []
    for k, system in enumerate(ranking["systems"]):
        best, worst = ranking["rank_ranges"][k]
        last = k == len(clusters) - 1
        rows.append(
            RankedRow(
                position=k + 1,
                system=system,
                mean=ranking["means"][k],
                n=ranking["n_segments"][k],
                low=intervals[k][0],
                high=intervals[k][1],
                best_rank=best,
                worst_rank=worst,
                cluster=clusters[k],
                wins=ranking["wins"][k],
                ends_cluster=not last and clusters[k + 1] != clusters[k],
            )
        )
    return rows
