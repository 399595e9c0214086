"""How well a subset of segments separates MT systems (seed 000 App. A, Fig. 8). Pure numpy/scipy.

No Django import. Seed 000's Appendix A argues that difficult texts rank models better and
measures four properties of a subset against the whole test set and against random subsets of
the same size (Fig. 8); seed 001 (§3.3, Table 4) reports the same gaps between models. For a
subset of segments (columns of ``scores``) :func:`discrimination` computes:

1. ``mean_adjacent_p``: statistical power, the mean one-sided p-value between systems adjacent
   in the subset's own mean order (``P[a, b]`` for a directly above b): small = the subset
   separates neighbours;
2. ``mean_difficulty``: the mean over the subset's segments of ``100 - mean score`` (scores on a
   0-100 quality scale, seed 002's convention) or of a given per-segment difficulty;
3. ``mean_adjacent_gap``: the mean difference of means between adjacent systems in the subset's
   order (it telescopes to (best - worst) / (n - 1));
4. ``kendall_tau``: Kendall's tau-b (``scipy.stats.kendalltau``) between the subset's system
   means and the full set's, the full set standing in for the gold ranking;
5. ``spa``: soft pairwise accuracy against the full set, Thompson et al. (2024), "Improving
   statistical significance in human evaluation of automatic metrics via soft pairwise accuracy"
   (WMT24 metrics task's system-level meta-metric): the mean over system pairs i < j of
   ``1 - |p_subset(i > j) - p_full(i > j)|`` with one-sided p-values; here the subset plays
   the metric and the full set the human judgments;
6. ``n_clusters``: the number of WMT significance clusters on the subset (``stats.wmt_clusters``);
7. ``mean_adjacent_p_full_order``: statistical power measured against the full set's ranking,
   the mean over the full set's neighbours (a directly above b there) of the subset's one-sided
   ``P[a, b]``: small = the subset confirms the gold order of neighbours. Unlike (1) it does not
   reward a subset that reorders close systems (in its own order every neighbour is "ahead");
8. ``n_clusters_stepwise``: the cluster count of Zouhar et al. (2025a), "How to select datapoints
   for efficient human evaluation of NLG models?" (the subset-selection work seed 000 App. A
   cites; its ``subset2evaluate`` package counts clusters this way): walk the systems in the
   subset's mean order; a system opens a new cluster when the first system of the current
   cluster is significantly better than it (``P[head, s] < alpha``), else it joins that
   cluster. WMT's rule (6) needs every system above a boundary to beat every system below it,
   which on a few dozen segments and a dozen systems almost never happens; this count still
   resolves a subset's power there.

The p-values come from the same tests as a ranking (``stats.TESTS``), over all pairs.
:func:`subset_curve` does this for the hardest 5 %, 10 %, ..., 50 % of the segments and for
``n_random`` random subsets of each size, whose mean and standard deviation per field draw the
band a hardest subset is compared with; :func:`subset_point` is one such size (a fixed subset,
e.g. a challenge set's segments, against random subsets of its size).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as scipy_stats

from ranking.stats import (
    FloatArray,
    IntArray,
    Ranking,
    as_scores,
    json_safe,
    order_by_mean,
    pvalues_for,
    rank_systems,
    system_means,
    wmt_clusters,
)

__all__ = [
    "DEFAULT_FRACTIONS",
    "FIELDS",
    "Discrimination",
    "discrimination",
    "stepwise_clusters",
    "subset_curve",
    "subset_point",
]

DEFAULT_FRACTIONS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
FIELDS = (
    "mean_adjacent_p",
    "mean_difficulty",
    "mean_adjacent_gap",
    "kendall_tau",
    "spa",
    "n_clusters",
    "mean_adjacent_p_full_order",
    "n_clusters_stepwise",
)
MAX_RANDOM_SUBSETS = 1000


@dataclass(frozen=True)
class Discrimination:
    """Seed 000 App. A's measures of one subset (NaN where undefined, e.g. one system)."""

    mean_adjacent_p: float
    mean_difficulty: float  # mean of (100 - mean score) or of a given difficulty vector
    mean_adjacent_gap: float
    kendall_tau: float  # vs the full set's ranking
    spa: float  # soft pairwise accuracy vs the full set (Thompson et al. 2024)
    n_clusters: int  # WMT's rule
    mean_adjacent_p_full_order: float  # neighbours in the full set's order
    n_clusters_stepwise: int  # Zouhar et al. (2025a)

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe (NaN -> None)."""
        result: dict[str, Any] = json_safe(asdict(self))
        return result


def _subset_columns(subset: ArrayLike, n_segments: int) -> IntArray:
    s = np.asarray(subset)
    if s.dtype == np.bool_:
        if s.shape != (n_segments,):
            raise ValueError(f"a boolean subset must have one entry per segment ({n_segments})")
        return np.flatnonzero(s).astype(np.intp)
    if s.ndim != 1 or (s.size and not np.issubdtype(s.dtype, np.integer)):
        raise ValueError("subset must be segment indices or a boolean mask")
    columns = s.astype(np.intp)
    if columns.size == 0:
        raise ValueError("the subset is empty")
    if columns.min() < 0 or columns.max() >= n_segments:
        raise ValueError(f"subset indices must be within 0..{n_segments - 1}")
    if np.unique(columns).size != columns.size:
        raise ValueError("subset indices must not repeat")
    return columns


def _ranked_scores(scores: ArrayLike, full: Ranking) -> FloatArray:
    """``scores`` with its rows in the full ranking's order."""
    x = as_scores(scores)
    if full.input_order.size != x.shape[0]:
        raise ValueError(
            "the full ranking must come from rank_systems on these scores (its input_order "
            f"lists {full.input_order.size} systems, the scores have {x.shape[0]})"
        )
    return x[full.input_order]


def _difficulty(sub: FloatArray, columns: IntArray, difficulty: ArrayLike | None) -> float:
    if difficulty is not None:
        d = np.array(difficulty, dtype=np.float64).ravel()
        if d.size <= int(columns.max()):
            raise ValueError("difficulty must hold one value per segment")
        values = d[columns]
    else:
        scored = ~np.isnan(sub)
        counts = scored.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            segment_means = np.where(counts > 0, np.nansum(sub, axis=0) / counts, np.nan)
        values = 100.0 - segment_means
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else math.nan


def _soft_pairwise_accuracy(p_subset: FloatArray, p_full: FloatArray) -> float:
    upper = np.triu(np.ones(p_subset.shape, dtype=bool), 1)
    both = upper & np.isfinite(p_subset) & np.isfinite(p_full)
    if not both.any():
        return math.nan
    return float(np.mean(1.0 - np.abs(p_subset[both] - p_full[both])))


def _kendall_tau(full_means: FloatArray, subset_means: FloatArray) -> float:
    both = np.isfinite(full_means) & np.isfinite(subset_means)
    if both.sum() < 2:
        return math.nan
    tau = scipy_stats.kendalltau(full_means[both], subset_means[both]).statistic
    return float(tau)


def _adjacent(values: FloatArray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else math.nan


def stepwise_clusters(p_values: ArrayLike, order: ArrayLike, alpha: float = 0.05) -> int:
    """Zouhar et al. (2025a)'s cluster count (measure 8): walk ``order`` (best first); a system
    opens a new cluster when the current cluster's first system beats it, ``P[head, s] <
    alpha`` (NaN: untested, not significant)."""
    p = np.asarray(p_values, dtype=np.float64)
    order = np.asarray(order, dtype=np.intp)
    if order.size == 0:
        return 0
    clusters, head = 1, int(order[0])
    for system in order[1:].tolist():
        value = p[head, system]
        if np.isfinite(value) and value < alpha:
            clusters, head = clusters + 1, system
    return clusters


def discrimination(
    scores: ArrayLike,
    subset: ArrayLike,
    *,
    full: Ranking,
    difficulty: ArrayLike | None = None,
    test: str = "wilcoxon",
    rng: np.random.Generator | None = None,
    n_resamples: int = 1000,
    alpha: float = 0.05,
) -> Discrimination:
    """Seed 000 App. A's measures of the segments ``subset`` (indices or a boolean mask).

    ``full`` is ``rank_systems`` on the same ``scores`` (all segments, all pairs, the same test);
    its ``input_order`` maps its ranks back to the rows of ``scores``.
    """
    x = _ranked_scores(scores, full)
    columns = _subset_columns(subset, x.shape[1])
    sub = x[:, columns]
    means = system_means(sub)
    order = order_by_mean(sub)
    p = pvalues_for(sub, test, pairs="all", n_resamples=n_resamples, rng=rng)
    return Discrimination(
        mean_adjacent_p=_adjacent(p[order[:-1], order[1:]]),
        mean_difficulty=_difficulty(sub, columns, difficulty),
        mean_adjacent_gap=_adjacent(means[order[:-1]] - means[order[1:]]),
        kendall_tau=_kendall_tau(np.asarray(full.means, dtype=np.float64), means),
        spa=_soft_pairwise_accuracy(p, np.asarray(full.p_values, dtype=np.float64)),
        n_clusters=int(wmt_clusters(p, order, alpha).max()),
        # Rows follow the full ranking, so its neighbours are rows k and k + 1.
        mean_adjacent_p_full_order=_adjacent(np.diagonal(p, offset=1).copy()),
        n_clusters_stepwise=stepwise_clusters(p, order, alpha),
    )


def _subset_size(fraction: float, n_segments: int) -> int:
    if not 0 < fraction <= 1:
        raise ValueError("fractions must be in (0, 1]")
    return min(n_segments, max(2, math.floor(fraction * n_segments + 0.5)))


def _band(values: Sequence[Discrimination]) -> tuple[dict[str, float], dict[str, float]]:
    """Mean and sample sd (ddof=1) of each field over the random subsets, ignoring NaN."""
    mean: dict[str, float] = {}
    sd: dict[str, float] = {}
    for name in FIELDS:
        column = np.array([getattr(v, name) for v in values], dtype=np.float64)
        finite = column[np.isfinite(column)]
        mean[name] = float(finite.mean()) if finite.size else math.nan
        sd[name] = float(finite.std(ddof=1)) if finite.size > 1 else math.nan
    return mean, sd


def subset_point(
    scores: ArrayLike,
    subset: ArrayLike,
    *,
    full: Ranking,
    n_random: int = 20,
    rng: np.random.Generator,
    test: str = "wilcoxon",
    difficulty: ArrayLike | None = None,
    n_resamples: int = 1000,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """One subset against ``n_random`` random subsets of its size drawn from all segments.

    Returns ``{"fraction", "size", "subset": {field: value}, "random_mean": {...},
    "random_sd": {...}}`` (JSON-safe; the sd is the sample sd, ddof=1, over the random subsets).
    """
    x = as_scores(scores)
    n_segments = x.shape[1]
    if not 1 <= n_random <= MAX_RANDOM_SUBSETS:
        raise ValueError(f"n_random must be between 1 and {MAX_RANDOM_SUBSETS}")
    columns = _subset_columns(subset, n_segments)
    settings: dict[str, Any] = {
        "full": full,
        "difficulty": difficulty,
        "test": test,
        "rng": rng,
        "n_resamples": n_resamples,
        "alpha": alpha,
    }
    chosen = discrimination(x, columns, **settings)
    randoms = [
        discrimination(x, rng.choice(n_segments, size=columns.size, replace=False), **settings)
        for _ in range(n_random)
    ]
    mean, sd = _band(randoms)
    point: dict[str, Any] = json_safe(
        {
            "fraction": columns.size / n_segments,
            "size": int(columns.size),
            "subset": asdict(chosen),
            "random_mean": mean,
            "random_sd": sd,
        }
    )
    return point


def subset_curve(
    scores: ArrayLike,
    order_hardest_first: ArrayLike,
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    *,
    n_random: int = 20,
    rng: np.random.Generator,
    test: str = "wilcoxon",
    full: Ranking | None = None,
    difficulty: ArrayLike | None = None,
    n_resamples: int = 1000,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """Discrimination of the hardest ``fraction`` of segments and of random subsets that size.

    ``order_hardest_first`` lists segment indices, hardest first (e.g. ascending estimated
    quality); the subset of fraction f is its first ``f * n_segments`` entries (rounded, at least
    2). Each size also gets ``n_random`` subsets drawn without replacement from all segments by
    ``rng`` (:func:`subset_point`). Returns a JSON-safe dict::

        {"test": ..., "n_random": ..., "n_segments": ..., "full": {field: value},
         "points": [{"fraction": f, "size": k, "subset": {field: value},
                     "random_mean": {field: value}, "random_sd": {field: value}}, ...]}

    with the fields of :class:`Discrimination` (None where undefined).
    """
    x = as_scores(scores)
    n_segments = x.shape[1]
    if not 1 <= n_random <= MAX_RANDOM_SUBSETS:
        raise ValueError(f"n_random must be between 1 and {MAX_RANDOM_SUBSETS}")
    hardest = _subset_columns(order_hardest_first, n_segments)
    if full is None:
        names = [f"system {k}" for k in range(x.shape[0])]
        full = rank_systems(x, names, test=test, n_resamples=n_resamples, alpha=alpha, rng=rng)
    settings: dict[str, Any] = {
        "full": full,
        "difficulty": difficulty,
        "test": test,
        "rng": rng,
        "n_resamples": n_resamples,
        "alpha": alpha,
    }
    points = []
    for fraction in fractions:
        size = _subset_size(float(fraction), n_segments)
        if size > hardest.size:
            raise ValueError(f"order_hardest_first lists {hardest.size} segments, need {size}")
        point = subset_point(x, hardest[:size], n_random=n_random, **settings)
        points.append(point | {"fraction": float(fraction)})
    whole = discrimination(x, np.arange(n_segments), **settings)
    result: dict[str, Any] = json_safe(
        {
            "test": test,
            "n_random": n_random,
            "n_segments": n_segments,
            "full": asdict(whole),
            "points": points,
        }
    )
    return result
