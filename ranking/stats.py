"""Rank MT systems with significance tests and WMT's clusters (issue 41). Pure numpy/scipy.

No Django import. Systems are rows: ``scores`` is a float array (n_systems, n_segments), NaN
where a system was not scored on a segment, higher is better. A pairwise p-value matrix ``P``
has ``P[i, j]`` = the one-sided p-value for "system i is better than system j" (small = i is
significantly better); the diagonal and the pairs not tested are NaN. Every tested pair is
tested in both directions, so ``P[i, j]`` and ``P[j, i]`` are both set.

Significance tests (the names in :data:`TESTS` are what a ranking stores):

``wilcoxon``
    WMT24/WMT25 style: Wilcoxon signed-rank on the paired segment scores of the two systems,
    over the segments both were scored on, one call of ``scipy.stats.wilcoxon(...,
    alternative="greater")`` per pair and direction with scipy's default ``zero_method="wilcox"``
    (segments where the two systems tie are dropped before ranking, Wilcoxon 1945) and scipy's
    default method: the exact distribution up to 50 differences without ties or zeros, every
    sign pattern enumerated up to 13 differences with ties or zeros (done here as one matrix
    product, scipy's own loop takes about half a second a call), the normal approximation
    otherwise. A pair whose differences are all zero gets p = 1 in both directions (no evidence
    either way; scipy says the same).
``ranksum``
    WMT21-23 style: one-sided Wilcoxon rank-sum (Mann-Whitney U) between two samples, one call of
    ``scipy.stats.mannwhitneyu(..., alternative="greater")`` per pair and direction. WMT's
    crowd-DA releases apply it to the per-segment mean z-scores of the two systems (checked: the
    WMT22 lv-en release's ``adwilcox-lven.csv`` is exactly this test on ``ad-seg-scores-lv-en.csv``;
    the WMT22 DA+SQM ``make_rankings.py`` does the same on Appraise's segment means), so that is
    what :func:`rank_systems` tests unless it is given other ``judgments``. Per-annotator
    z-scores (:func:`zscore_by_annotator`) are the caller's step.
``permutation``
    Paired approximate randomisation, the PERM-BOTH family of Deutsch et al. (2021) that seed 002
    uses for its significance clusters (App. D, Tables 7-8): per segment the two systems' scores
    are swapped with probability 1/2 (the sign of the difference flips), the statistic is the
    mean difference, and ``p = (1 + #{resampled >= observed}) / (1 + n_resamples)`` (Phipson &
    Smyth 2010; the observed split counts once). When ``2 ** n_segments <= n_resamples`` (and
    n_segments <= 16) every split is enumerated instead and
    ``p = #{split >= observed} / 2 ** n_segments``, exactly what
    ``scipy.stats.permutation_test(..., permutation_type="samples")`` does.
``bootstrap``
    Paired bootstrap resampling (Koehn 2004): resample the segments with replacement, the same
    draw for every system, and recompute each pair's mean difference over the drawn segments both
    systems were scored on. The default ``variant="centred"`` counts the resamples whose
    difference exceeds twice the observed one, ``p = (1 + #{d* >= 2 d}) / (1 + n_valid)``: the
    bootstrap distribution shifted to the null hypothesis of no difference (Efron & Tibshirani
    1993, §16.4; Berg-Kirkpatrick et al. 2012, §2), so it is a test of that null whose p-values
    read like the permutation test's. ``variant="koehn"`` is Koehn's own count, the share of
    resamples where system i is not better, ``p = (1 + #{d* <= 0}) / (1 + n_valid)``: a bootstrap
    confidence that i is better, close to the centred p for symmetric differences but not a test
    of a null hypothesis. A resample that draws none of a pair's common segments does not count.

The permutation and bootstrap tests are vectorised: each block of resamples is a 0/1 (flip) or
count (bootstrap) matrix ``R`` of shape (resamples, segments), each chunk of pairs a matrix of
score differences ``D`` (pairs, segments, 0 where either system is unscored), and one matrix
product ``R @ D.T`` gives every resampled statistic of the block. Blocks and chunks are sized so
that no array holds more than ``chunk_cells`` floats; the resamples are drawn once per block and
shared by every pair (each pair's test stays a valid Monte-Carlo test; only the Monte-Carlo
errors of different pairs are correlated), so results do not depend on the pair chunking. The
flips of a segment a pair did not share change nothing (its difference is 0), so every pair is
tested on exactly its common segments.

Holm (1979) correction runs over every one-sided hypothesis that was tested (each finite
off-diagonal entry of ``P``), which controls the family-wise error of every directional claim.

Ranks and clusters follow WMT's published rule: see :func:`wins_and_losses`,
:func:`rank_ranges` and :func:`wmt_clusters`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as scipy_stats

__all__ = [
    "TESTS",
    "Ranking",
    "bootstrap_pvalues",
    "holm",
    "json_safe",
    "order_by_mean",
    "permutation_pvalues",
    "rank_ranges",
    "rank_systems",
    "ranksum_pvalues",
    "system_means",
    "wilcoxon_pvalues",
    "wins_and_losses",
    "wmt_clusters",
    "zscore_by_annotator",
]

TESTS = ("wilcoxon", "ranksum", "permutation", "bootstrap")
PAIRS = ("all", "adjacent")
BOOTSTRAP_VARIANTS = ("centred", "koehn")

# The array types of ranking's pure modules (stats, discrimination, allocation, replay).
FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]
BoolArray = NDArray[np.bool_]

# Scores beyond this magnitude are refused: sums over many segments must stay finite and exact
# enough to compare resampled statistics with the observed one.
MAX_ABS_SCORE = 1e12
# Resamples above this are refused (1e6 x 2,000 segments is already minutes of matrix products).
MAX_RESAMPLES = 1_000_000
# No array built by the resampling tests holds more floats than this (16 MiB of float64); a
# test's peak is a handful of such arrays whatever the numbers of pairs and resamples.
DEFAULT_CHUNK_CELLS = 1 << 21
# Resampled statistics within this fraction of sum(|d|) of the observed one count as equal: the
# matrix product rounds, and an exact tie (the identity split) must count.
RELATIVE_TIE = 1e-10
# Every split is enumerated (as scipy does when 2**n <= n_resamples) up to this many segments:
# 65,536 splits; beyond, the Monte-Carlo test keeps memory within the chunks.
MAX_EXACT_SEGMENTS = 16


# --- inputs ------------------------------------------------------------------------------------


def as_scores(scores: ArrayLike) -> FloatArray:
    """The (systems, segments) float matrix, refusing what the tests cannot use."""
    try:
        x = np.array(scores, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"scores must be a matrix of numbers ({error})") from None
    if x.ndim != 2:
        raise ValueError(f"scores must be a (systems, segments) matrix, got {x.ndim} dimension(s)")
    if np.isinf(x).any():
        raise ValueError("scores must be finite numbers or NaN (not scored); found an infinity")
    if np.nanmax(np.abs(x), initial=0.0) > MAX_ABS_SCORE:
        raise ValueError(f"scores beyond ±{MAX_ABS_SCORE:g} are refused")
    return x


def _as_sample(values: ArrayLike, index: int) -> FloatArray:
    try:
        a = np.array(values, dtype=np.float64).ravel()
    except (TypeError, ValueError) as error:
        raise ValueError(f"judgments of system {index} must be numbers ({error})") from None
    if np.isinf(a).any():
        raise ValueError(f"judgments of system {index} contain an infinity")
    if np.nanmax(np.abs(a), initial=0.0) > MAX_ABS_SCORE:
        raise ValueError(f"judgments of system {index} go beyond ±{MAX_ABS_SCORE:g}")
    return a[~np.isnan(a)]


def _check_order(order: ArrayLike, n: int) -> IntArray:
    o = np.asarray(order)
    if o.shape != (n,) or not np.issubdtype(o.dtype, np.integer):
        raise ValueError(f"order must list the {n} system indices")
    o = o.astype(np.intp)
    if not np.array_equal(np.sort(o), np.arange(n)):
        raise ValueError(f"order must be a permutation of 0..{n - 1}")
    return o


def _check_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        raise ValueError("n_resamples must be an integer")
    if not 1 <= n_resamples <= MAX_RESAMPLES:
        raise ValueError(f"n_resamples must be between 1 and {MAX_RESAMPLES}")
    return int(n_resamples)


def _check_rng(rng: object, test: str) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"the {test} test needs rng=numpy.random.Generator (store its seed)")
    return rng


def _empty_p(n: int) -> FloatArray:
    return np.full((n, n), np.nan)


# --- means and order ---------------------------------------------------------------------------


def system_means(scores: ArrayLike) -> FloatArray:
    """Mean score of each system over the segments it was scored on (NaN if none)."""
    x = as_scores(scores)
    counts = np.sum(~np.isnan(x), axis=1)
    sums = np.nansum(x, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _order_of(means: FloatArray) -> IntArray:
    # argsort of -mean puts NaN (never scored) last; "stable" keeps the input order on ties.
    return np.argsort(-means, kind="stable").astype(np.intp)


def order_by_mean(scores: ArrayLike) -> IntArray:
    """System indices, best mean first; ties keep the input order; unscored systems last."""
    return _order_of(system_means(scores))


def tested_pairs(
    n: int, pairs: str, order: IntArray | None, means: FloatArray
) -> tuple[IntArray, IntArray]:
    """The unordered pairs (i, j) to test: all of them, or neighbours in ``order``."""
    if pairs not in PAIRS:
        raise ValueError(f"pairs must be one of {', '.join(PAIRS)}")
    if pairs == "all":
        i, j = np.triu_indices(n, 1)
        return i.astype(np.intp), j.astype(np.intp)
    o = _order_of(means) if order is None else _check_order(order, n)
    return o[:-1].copy(), o[1:].copy()


# --- the tests called pair by pair (scipy) -----------------------------------------------------


def wilcoxon_pvalues(
    scores: ArrayLike, pairs: str = "all", order: ArrayLike | None = None
) -> FloatArray:
    """One-sided Wilcoxon signed-rank p-values on paired segment scores (WMT24/25 style).

    ``P[i, j]`` is ``scipy.stats.wilcoxon(x_i - x_j, alternative="greater").pvalue`` over the
    segments both systems were scored on (``zero_method="wilcox"``: tied segments are dropped).
    NaN where the two systems share no segment.
    """
    x = as_scores(scores)
    n = x.shape[0]
    first, second = tested_pairs(n, pairs, _optional_order(order, n), system_means(x))
    p = _empty_p(n)
    scored = ~np.isnan(x)
    with warnings.catch_warnings():
        # scipy warns when it switches to the normal approximation or when every difference
        # is zero (it then answers p = 1, as below): both are expected here.
        warnings.simplefilter("ignore")
        for i, j in zip(first.tolist(), second.tolist(), strict=True):
            both = scored[i] & scored[j]
            if not both.any():
                continue
            d = x[i, both] - x[j, both]
            if not d.any():
                p[i, j] = p[j, i] = 1.0
                continue
            p[i, j], p[j, i] = _signed_rank_pvalues(d)
    return p


def _signed_rank_pvalues(d: FloatArray) -> tuple[float, float]:
    """One-sided p-values of the signed-rank test on ``d`` and on ``-d``, as scipy computes them.

    scipy (>= 1.13, ``method="auto"``) answers at most 13 differences with ties or zeros by an
    exact permutation test that calls its statistic on every one of the 2**n sign patterns, about
    half a second a call; the same enumeration as one matrix product gives the same p-values
    (the ranks of |d| do not change when signs flip). Everything else goes to scipy.
    """
    magnitudes = np.abs(d[d != 0])
    tied = np.unique(magnitudes).size < magnitudes.size
    if d.size > 13 or not (tied or magnitudes.size < d.size):
        greater = scipy_stats.wilcoxon(d, alternative="greater").pvalue
        less = scipy_stats.wilcoxon(-d, alternative="greater").pvalue
        return float(greater), float(less)
    ranks = np.zeros(d.size)
    ranks[d != 0] = scipy_stats.rankdata(magnitudes)
    flips = _all_splits(d.size)
    # After a flip a difference is positive where it was negative, and the other way round.
    r_plus = (1.0 - flips) @ (ranks * (d > 0)) + flips @ (ranks * (d < 0))
    observed = float(ranks[d > 0].sum())
    return float(np.mean(r_plus >= observed)), float(np.mean(r_plus <= observed))


def ranksum_pvalues(
    judgments: Sequence[ArrayLike], pairs: str = "all", order: ArrayLike | None = None
) -> FloatArray:
    """One-sided Wilcoxon rank-sum (Mann-Whitney U) p-values, WMT21-23 style.

    ``judgments[i]`` holds system i's sample (individual judgments, or per-segment means as
    WMT's releases use; NaN are dropped). ``P[i, j]`` is ``scipy.stats.mannwhitneyu(judgments[i],
    judgments[j], alternative="greater").pvalue``; NaN where either sample is empty. Adjacent
    pairs follow ``order`` or, without it, the samples' means.
    """
    samples = [_as_sample(values, k) for k, values in enumerate(judgments)]
    n = len(samples)
    means = np.array([s.mean() if s.size else np.nan for s in samples], dtype=np.float64)
    first, second = tested_pairs(n, pairs, _optional_order(order, n), means)
    p = _empty_p(n)
    for i, j in zip(first.tolist(), second.tolist(), strict=True):
        a, b = samples[i], samples[j]
        if a.size == 0 or b.size == 0:
            continue
        p[i, j] = float(scipy_stats.mannwhitneyu(a, b, alternative="greater").pvalue)
        p[j, i] = float(scipy_stats.mannwhitneyu(b, a, alternative="greater").pvalue)
    return p


def _optional_order(order: ArrayLike | None, n: int) -> IntArray | None:
    return None if order is None else _check_order(order, n)


def zscore_by_annotator(scores: ArrayLike, annotator_ids: ArrayLike) -> FloatArray:
    """WMT's standardisation: each judgment minus its annotator's mean, over their sd.

    The mean and the sample standard deviation (ddof=1, as R's ``sd`` in WMT's crowd-DA scripts
    and pandas' ``std`` in WMT22's ``make_rankings.py``) run over all of that annotator's
    judgments (Graham et al. 2017, NLE 23(1), §4). An annotator with fewer than two judgments or
    a zero sd cannot be standardised: their judgments become NaN (WMT22 drops such annotators).
    NaN scores stay NaN and do not count.
    """
    s = np.array(scores, dtype=np.float64).ravel()
    ids = np.asarray(annotator_ids).ravel()
    if ids.shape != s.shape:
        raise ValueError("scores and annotator_ids must have the same length")
    if np.isinf(s).any() or np.nanmax(np.abs(s), initial=0.0) > MAX_ABS_SCORE:
        raise ValueError(f"scores must be numbers within ±{MAX_ABS_SCORE:g} or NaN")
    z = np.full(s.shape, np.nan)
    valid = ~np.isnan(s)
    if not valid.any():
        return z
    _, group = np.unique(ids[valid], return_inverse=True)
    values = s[valid]
    counts = np.bincount(group).astype(np.float64)
    mean = np.bincount(group, weights=values) / counts
    deviation = values - mean[group]
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.bincount(group, weights=deviation**2) / (counts - 1))
        usable = (counts >= 2) & (sd > 0)
        z[valid] = np.where(usable[group], deviation / np.where(usable, sd, 1.0)[group], np.nan)
    return z


# --- the vectorised resampling tests ------------------------------------------------------------


@dataclass(frozen=True)
class _PairChunk:
    """Score differences of a chunk of pairs, 0 where either system is unscored."""

    rows: slice
    diff: FloatArray  # (pairs, segments)
    common: FloatArray  # (pairs, segments), 1.0 where both are scored
    n_common: FloatArray  # (pairs,)
    total: FloatArray  # (pairs,) sum of the differences
    scale: FloatArray  # (pairs,) sum of |differences|, the tie tolerance's unit


def _pair_chunks(
    x: FloatArray, first: IntArray, second: IntArray, size: int
) -> Iterator[_PairChunk]:
    for start in range(0, first.size, size):
        rows = slice(start, min(start + size, first.size))
        # In place, to keep one chunk-sized temporary: a difference is NaN where either is.
        diff = x[first[rows]]
        diff -= x[second[rows]]
        both = ~np.isnan(diff)
        diff[~both] = 0.0
        yield _PairChunk(
            rows=rows,
            diff=diff,
            common=both.astype(np.float64),
            n_common=both.sum(axis=1).astype(np.float64),
            total=diff.sum(axis=1),
            scale=np.abs(diff).sum(axis=1),
        )


def _block_sizes(n_resamples: int, n_pairs: int, n_segments: int, cells: int) -> tuple[int, int]:
    """Resamples per block and pairs per chunk so that no array exceeds ``cells`` floats."""
    if cells < 1:
        raise ValueError("chunk_cells must be positive")
    per_block = min(n_resamples, max(1, cells // max(n_segments, 1)))
    per_chunk = min(max(n_pairs, 1), max(1, cells // max(n_segments, per_block)))
    return per_block, per_chunk


def _block_lengths(n_resamples: int, per_block: int) -> Iterator[int]:
    """The number of resamples in each block when ``n_resamples`` are drawn ``per_block`` at a
    time (the last block holds the rest)."""
    for start in range(0, n_resamples, per_block):
        yield min(per_block, n_resamples - start)


def _flip_blocks(
    n_segments: int, n_resamples: int, per_block: int, rng: np.random.Generator
) -> Iterator[FloatArray]:
    """Random splits: 1.0 where a segment's two scores are swapped."""
    for size in _block_lengths(n_resamples, per_block):
        flips = rng.random((size, n_segments))
        flips *= 2.0
        yield np.floor(flips, out=flips)  # 0 or 1 with probability 1/2, in place


def _all_splits(n_segments: int) -> FloatArray:
    codes = np.arange(2**n_segments, dtype=np.int64)[:, None]
    return ((codes >> np.arange(n_segments, dtype=np.int64)) & 1).astype(np.float64)


def permutation_pvalues(
    scores: ArrayLike,
    *,
    n_resamples: int = 1000,
    rng: np.random.Generator | None,
    pairs: str = "all",
    order: ArrayLike | None = None,
    chunk_cells: int = DEFAULT_CHUNK_CELLS,
) -> FloatArray:
    """Paired permutation (PERM-BOTH family) p-values for the mean difference, vectorised.

    A split swaps the two systems' scores on the segments where the flip matrix holds 1, so the
    resampled sum of differences is ``total - 2 * f`` with ``f = flips @ d``; it is at least
    the observed ``total`` exactly when ``f <= 0`` (and at most when ``f >= 0``).
    """
    x = as_scores(scores)
    n, n_segments = x.shape
    n_resamples = _check_resamples(n_resamples)
    first, second = tested_pairs(n, pairs, _optional_order(order, n), system_means(x))
    exact = n_segments <= MAX_EXACT_SEGMENTS and 2**n_segments <= n_resamples
    draws = 2**n_segments if exact else n_resamples
    per_block, per_chunk = _block_sizes(draws, first.size, n_segments, chunk_cells)
    blocks: Iterable[FloatArray] = (
        [_all_splits(n_segments)]
        if exact
        else _flip_blocks(n_segments, n_resamples, per_block, _check_rng(rng, "permutation"))
    )
    at_least = np.zeros(first.size)
    at_most = np.zeros(first.size)
    n_common = np.zeros(first.size)
    for flips in blocks:
        for chunk in _pair_chunks(x, first, second, per_chunk):
            f = flips @ chunk.diff.T  # (resamples, pairs)
            tie = RELATIVE_TIE * chunk.scale
            at_least[chunk.rows] += np.sum(f <= tie, axis=0)
            at_most[chunk.rows] += np.sum(f >= -tie, axis=0)
            n_common[chunk.rows] = chunk.n_common
    if exact:
        better, worse = at_least / draws, at_most / draws
    else:
        better, worse = (1 + at_least) / (1 + draws), (1 + at_most) / (1 + draws)
    return _fill(n, first, second, better, worse, n_common > 0)


def _count_blocks(
    n_segments: int, n_resamples: int, per_block: int, rng: np.random.Generator
) -> Iterator[FloatArray]:
    """Bootstrap resamples as counts: how often each segment was drawn, one row per resample."""
    for size in _block_lengths(n_resamples, per_block):
        drawn = rng.integers(0, n_segments, size=(size, n_segments))
        drawn += (np.arange(size) * n_segments)[:, None]  # one bincount for the whole block
        counts = np.bincount(drawn.ravel(), minlength=size * n_segments)
        del drawn
        yield counts.reshape(size, n_segments).astype(np.float64)


def bootstrap_pvalues(
    scores: ArrayLike,
    *,
    n_resamples: int = 1000,
    rng: np.random.Generator | None,
    pairs: str = "all",
    order: ArrayLike | None = None,
    variant: Literal["centred", "koehn"] = "centred",
    chunk_cells: int = DEFAULT_CHUNK_CELLS,
) -> FloatArray:
    """Paired bootstrap p-values (Koehn 2004), centred on the null by default; vectorised."""
    if variant not in BOOTSTRAP_VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(BOOTSTRAP_VARIANTS)}")
    x = as_scores(scores)
    n, n_segments = x.shape
    n_resamples = _check_resamples(n_resamples)
    generator = _check_rng(rng, "bootstrap")
    first, second = tested_pairs(n, pairs, _optional_order(order, n), system_means(x))
    per_block, per_chunk = _block_sizes(n_resamples, first.size, n_segments, chunk_cells)
    at_least = np.zeros(first.size)
    at_most = np.zeros(first.size)
    valid = np.zeros(first.size)
    for counts in _count_blocks(n_segments, n_resamples, per_block, generator):
        for chunk in _pair_chunks(x, first, second, per_chunk):
            drawn = counts @ chunk.common.T  # common segments drawn, (resamples, pairs)
            resampled = counts @ chunk.diff.T  # their sum of differences
            with np.errstate(invalid="ignore", divide="ignore"):
                observed = np.where(chunk.n_common > 0, chunk.total / chunk.n_common, 0.0)
            # Centred: d* - d >= d, i.e. sum* >= 2 d n*; Koehn: i not better, sum* <= 0.
            threshold = drawn * (2 * observed if variant == "centred" else 0.0)
            tie = RELATIVE_TIE * chunk.scale * np.maximum(drawn, 1)
            usable = drawn > 0
            valid[chunk.rows] += usable.sum(axis=0)
            if variant == "centred":
                at_least[chunk.rows] += np.sum(usable & (resampled >= threshold - tie), axis=0)
                at_most[chunk.rows] += np.sum(usable & (resampled <= threshold + tie), axis=0)
            else:
                at_least[chunk.rows] += np.sum(usable & (resampled <= threshold + tie), axis=0)
                at_most[chunk.rows] += np.sum(usable & (resampled >= threshold - tie), axis=0)
    better = (1 + at_least) / (1 + valid)
    worse = (1 + at_most) / (1 + valid)
    return _fill(n, first, second, better, worse, valid > 0)


def _fill(
    n: int,
    first: IntArray,
    second: IntArray,
    better: FloatArray,
    worse: FloatArray,
    tested: NDArray[np.bool_],
) -> FloatArray:
    p = _empty_p(n)
    p[first[tested], second[tested]] = better[tested]
    p[second[tested], first[tested]] = worse[tested]
    return p


# --- multiple comparisons, ranks and clusters --------------------------------------------------


def holm(p_values: ArrayLike) -> FloatArray:
    """Holm's step-down adjustment over every tested one-sided hypothesis (finite off-diagonal).

    The k-th smallest of m p-values becomes ``max_{l <= k} min(1, (m - l + 1) p_(l))`` (Holm
    1979); NaN cells stay NaN. Rejecting where the adjusted value is below alpha controls the
    family-wise error of all the directional claims at alpha.
    """
    p = np.array(p_values, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError("P must be a square matrix")
    off_diagonal = ~np.eye(p.shape[0], dtype=bool)
    tested = off_diagonal & np.isfinite(p)
    values = p[tested]
    m = values.size
    adjusted = p.copy()
    adjusted[~off_diagonal] = np.nan
    if m == 0:
        return adjusted
    rank = np.argsort(values, kind="stable")
    stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * values[rank]))
    out = np.empty(m)
    out[rank] = stepped
    adjusted[tested] = out
    return adjusted


def _positions(order: IntArray) -> IntArray:
    position = np.empty(order.size, dtype=np.intp)
    position[order] = np.arange(order.size)
    return position


def wins_and_losses(
    p_values: ArrayLike, order: ArrayLike, alpha: float = 0.05
) -> tuple[IntArray, IntArray]:
    """Per system (rows of P): how many systems it significantly beats / is beaten by.

    As WMT counts them (WMT22 ``humaneval/DA+SQM/make_rankings.py``, ``add_wins_losses_*``):
    i wins over j when ``P[i, j] < alpha`` *and* i is above j in ``order`` (the mean order), so a
    test that disagrees with the means never makes a lower system win. Untested pairs never win.
    """
    p = _square(p_values)
    o = _check_order(order, p.shape[0])
    if not 0 < alpha < 1:
        raise ValueError("alpha must be between 0 and 1")
    position = _positions(o)
    above = position[:, None] < position[None, :]
    with np.errstate(invalid="ignore"):
        beats = above & np.isfinite(p) & (p < alpha)
    return beats.sum(axis=1).astype(np.intp), beats.sum(axis=0).astype(np.intp)


def rank_ranges(p_values: ArrayLike, order: ArrayLike, alpha: float = 0.05) -> IntArray:
    """(n, 2) best and worst possible rank of each system (rows of P), 1-based.

    From 1 + the number of systems that significantly beat it to n - the number it significantly
    beats (WMT findings 2019-2022; WMT22 ``make_rankings.py``: ``top_rank = losses + 1``,
    ``worst_rank = system_count - wins``).
    """
    wins, losses = wins_and_losses(p_values, order, alpha)
    n = wins.size
    return np.column_stack([losses + 1, n - wins]).astype(np.intp)


def wmt_clusters(p_values: ArrayLike, order: ArrayLike, alpha: float = 0.05) -> IntArray:
    """Cluster number of each system (rows of P), 1 = the top cluster: WMT's published rule.

    Rule (WMT22 ``wmt-conference/wmt22-news-systems``, ``humaneval/DA+SQM/make_rankings.py``,
    the loop that prints the findings tables; the same rule produced the WMT22 crowd-DA release's
    ``humaneval/DA/newstest2022-toen/clusters.csv``, checked on all its language pairs):

    1. walk the systems in ``order`` (best mean first), keeping the smallest win count seen so
       far (over every system walked, not reset at a boundary);
    2. after the system at 0-based position k, draw a cluster boundary when that smallest win
       count equals the number of systems still below, ``n - k - 1``: every system so far beats
       at least as many systems as remain (the last system always closes a cluster);
    3. clusters are numbered from 1 at the top.

    Wins are :func:`wins_and_losses`' (significant and in the mean order), so a win count never
    exceeds the systems below and "equals" is the same as "at least". With adjacent-only tests
    a system wins at most once, so the rule draws almost no boundary: use all pairs for clusters.
    """
    o = _check_order(order, _square(p_values).shape[0])
    wins, _ = wins_and_losses(p_values, o, alpha)
    n = o.size
    cluster = np.empty(n, dtype=np.intp)
    current, smallest = 1, n
    for k, system in enumerate(o.tolist()):
        cluster[system] = current
        smallest = min(smallest, int(wins[system]))
        if smallest == n - k - 1:
            current += 1
    return cluster


def _square(p_values: ArrayLike) -> FloatArray:
    p = np.array(p_values, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError("P must be a square (systems, systems) matrix")
    return p


# --- a ranking ---------------------------------------------------------------------------------


def json_safe(value: Any) -> Any:
    """Numbers and arrays as plain JSON: NaN and infinities become None, numpy becomes lists."""
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if math.isfinite(f) else None
    return value


@dataclass(frozen=True)
class Ranking:
    """Systems in rank order with their means, p-values, rank ranges and WMT clusters.

    Every array is in rank order (``p_values[a, b]`` compares the a-th and the b-th ranked
    systems). ``input_order[k]`` is the row of the scores matrix the k-th ranked system came
    from (empty when the ranking was rebuilt from stored values).
    """

    systems: list[str]
    means: FloatArray
    n_segments: IntArray
    p_values: FloatArray
    rank_ranges: IntArray
    clusters: IntArray
    wins: IntArray
    input_order: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.intp))

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe (NaN -> None, numpy -> lists)."""
        return {
            "systems": list(self.systems),
            "means": json_safe(self.means),
            "n_segments": json_safe(self.n_segments),
            "p_values": json_safe(self.p_values),
            "rank_ranges": json_safe(self.rank_ranges),
            "clusters": json_safe(self.clusters),
            "wins": json_safe(self.wins),
            "input_order": json_safe(self.input_order),
        }


def pvalues_for(
    x: FloatArray,
    test: str,
    *,
    pairs: str = "all",
    order: IntArray | None = None,
    n_resamples: int = 1000,
    rng: np.random.Generator | None = None,
    judgments: Sequence[ArrayLike] | None = None,
) -> FloatArray:
    """``P`` of the named test on a checked scores matrix (rank-sum: on ``judgments`` if given,
    else on each system's scored segments, as WMT's crowd-DA releases do)."""
    if test == "wilcoxon":
        return wilcoxon_pvalues(x, pairs=pairs, order=order)
    if test == "ranksum":
        samples = list(x) if judgments is None else list(judgments)
        if len(samples) != x.shape[0]:
            raise ValueError("judgments must hold one array per system")
        return ranksum_pvalues(samples, pairs=pairs, order=order)
    if test == "permutation":
        return permutation_pvalues(x, n_resamples=n_resamples, rng=rng, pairs=pairs, order=order)
    if test == "bootstrap":
        return bootstrap_pvalues(x, n_resamples=n_resamples, rng=rng, pairs=pairs, order=order)
    raise ValueError(f"test must be one of {', '.join(TESTS)}")


def rank_systems(
    scores: ArrayLike,
    systems: Sequence[str],
    *,
    test: str = "wilcoxon",
    pairs: str = "all",
    n_resamples: int = 1000,
    alpha: float = 0.05,
    holm_correction: bool = False,
    rng: np.random.Generator | None = None,
    judgments: Sequence[ArrayLike] | None = None,
) -> Ranking:
    """Rank systems by mean score, test the pairs, and draw WMT's rank ranges and clusters.

    1. means over each system's scored segments; order by mean, best first (stable on ties);
    2. the pairwise one-sided p-values of ``test`` (all pairs, or neighbours in that order);
    3. optionally Holm over the tested hypotheses;
    4. wins, rank ranges and clusters at ``alpha`` (:func:`wmt_clusters`).

    Refuses (ValueError) a names list of the wrong length, duplicate names and a system never
    scored.
    """
    x = as_scores(scores)
    names = [str(s) for s in systems]
    if len(names) != x.shape[0]:
        raise ValueError(f"{len(names)} system names for {x.shape[0]} rows of scores")
    if not names:
        raise ValueError("there is no system to rank")
    if len(set(names)) != len(names):
        raise ValueError("system names must be unique")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be between 0 and 1")
    scored = np.sum(~np.isnan(x), axis=1)
    if (scored == 0).any():
        missing = names[int(np.argmax(scored == 0))]
        raise ValueError(f"system {missing!r} has no score")
    means = system_means(x)
    order = _order_of(means)
    p = pvalues_for(
        x, test, pairs=pairs, order=order, n_resamples=n_resamples, rng=rng, judgments=judgments
    )
    if holm_correction:
        p = holm(p)
    wins, _ = wins_and_losses(p, order, alpha)
    return Ranking(
        systems=[names[k] for k in order.tolist()],
        means=means[order],
        n_segments=scored[order].astype(np.intp),
        p_values=p[np.ix_(order, order)],
        rank_ranges=rank_ranges(p, order, alpha)[order],
        clusters=wmt_clusters(p, order, alpha)[order],
        wins=wins[order],
        input_order=order,
    )
