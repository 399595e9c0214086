"""Significance clusters of difficulty estimators by DEC (seed 002 App. D, Tables 7–8).

Seed 002 ranks its estimators by "clusters of statistical significance computed following
Freitag et al. (2024)", who use the PERM-BOTH permutation test of Deutsch et al. (2021). Pure
numpy: no Django import; the random draws come from an injected generator.

PERM-BOTH for two estimators ``a`` and ``b`` on language-pair blocks (:mod:`difficulty.dec`):

1. the cells used are those where the human score and both estimators' scores exist; within each
   language pair, each estimator's scores over those cells are z-scored (mean 0, population
   standard deviation 1; a constant estimator is only centred), so that swapping scores between
   the two estimators is meaningful;
2. the observed statistic is ``delta = DEC(a) − DEC(b)`` on those cells (seed 002 Eq. 1, the
   grouping of :func:`difficulty.dec.dec`: Kendall tau_b per (language pair, system), mean over
   systems, then over language pairs; z-scoring changes no tau_b);
3. each resample draws ``w ~ Bernoulli(0.5)`` per cell and swaps the two estimators' scores where
   ``w = 1``, then recomputes ``delta``; ``at_least`` counts the resamples whose delta is at least
   the observed one and ``at_most`` those at most. The p-value that ``a`` is better than ``b`` is
   ``at_least / k`` (the one that ``b`` is better, ``at_most / k``);
4. early stopping (Google's mt-metrics-eval stops in blocks of 1000 once ``p < 0.02`` or
   ``p > 0.5``): here blocks of :data:`BLOCK_SIZE` resamples, and the test stops at a block's end
   only when the overall p-value *and* every language pair's are outside ``[0.02, 0.5]``, so the
   per-pair ranks rest on as many resamples as the overall one needs.

Ranks (:func:`assign_ranks`, Google's ``AssignRanks``): estimators sorted by decreasing DEC;
``p[i, j]`` (``i < j``) is the p-value that ``j`` is at least as good as ``i``. Walking down the
list, a new cluster starts at ``i`` when some estimator between the start of the current cluster
and ``i`` is significantly better than ``i`` (``p <= alpha``).

How a resample is computed fast. For one (pair, system) group with human scores ``h`` and the
two estimators' scores ``a``, ``b``, the resampled scores of ``a`` are ``x = a`` where ``w = 0``
and ``b`` where ``w = 1``. Tau_b's numerator ``C − D = ½ Σ_{i≠j} sign(h_i − h_j) sign(x_i − x_j)``
is, with ``P_xy[i, j] = sign(h_i − h_j) sign(x_i − y_j)``, a quadratic form in ``w``:
``2(C − D) = 1ᵀP_aa1 + (2·colsum(P_ab) − 2·P_aa1)·w + wᵀQw`` with
``Q = P_aa + P_bb − P_ab − P_abᵀ``, and the other estimator's is the same with
``P_bb1``/``rowsum(P_ab)``. So one matrix product ``W @ Q`` (resamples × cells by cells × cells,
float32 and exact: every entry is an integer below 2²⁴) gives both estimators' numerators for a
whole block of resamples. Tau_b's denominator needs the ties of ``x``, counted on the sorted rows;
the ties of ``h`` do not change. The cost is O(k · Σ n²) over the groups' sizes ``n``, hence the
guard :func:`work_units` for the callers.

Deutsch, Dror and Roth (2021), "A Statistical Analysis of Summarization Evaluation Metrics using
Resampling Methods", TACL. Freitag et al. (2024), "Are LLMs Breaking MT Metrics? Results of the
WMT24 Metrics Shared Task". Google's reference implementation: ``stats.PermutationSigDiff`` and
``tasks.AssignRanks`` in github.com/google-research/mt-metrics-eval (read, not copied).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from difficulty.dec import LanguagePairBlock, dec

__all__ = [
    "ALPHA",
    "BLOCK_SIZE",
    "EARLY_MAX",
    "EARLY_MIN",
    "METHOD",
    "N_RESAMPLES",
    "PairTest",
    "Ranking",
    "Significance",
    "assign_ranks",
    "perm_both_pair",
    "perm_both_pvalues",
    "rank_by_significance",
    "rank_tests",
    "resampled_decs",
    "work_units",
]

METHOD = "PERM-BOTH"
N_RESAMPLES = 1000
ALPHA = 0.05
BLOCK_SIZE = 200
EARLY_MIN = 0.02
EARLY_MAX = 0.5
# Cells × cells of one (B × n) slice of Q: 4M entries (16 MB in float32) at most.
_SLICE_ENTRIES = 1 << 22
# A test keeps its groups' Q matrices between blocks of resamples up to this many bytes.
_KEPT_BYTES = 64 << 20

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class _Group:
    """One (language pair, system) group: the cells both estimators and the human scored."""

    lp: int
    human: FloatArray
    a: FloatArray
    b: FloatArray
    cells: NDArray[np.intp]  # the group's rows in its language pair's block
    column: int

    @property
    def n(self) -> int:
        return int(self.human.size)


def _per_cell(block: LanguagePairBlock) -> FloatArray:
    estimate = block.estimate
    if estimate.ndim == 1:
        return np.repeat(estimate[:, None], len(block.systems), axis=1)
    return np.asarray(estimate, dtype=float)


def _zscore(values: FloatArray) -> FloatArray:
    centred: FloatArray = values - values.mean()
    spread = float(values.std())
    return centred / spread if spread > 0 else centred


def _groups(
    blocks_a: Sequence[LanguagePairBlock], blocks_b: Sequence[LanguagePairBlock]
) -> list[_Group]:
    """Step 1: the cells both estimators scored, z-scored per language pair, by group."""
    if [x.code for x in blocks_a] != [x.code for x in blocks_b]:
        raise ValueError("both estimators need the same language pairs, in the same order")
    groups = []
    for lp, (block_a, block_b) in enumerate(zip(blocks_a, blocks_b, strict=True)):
        same = block_a.systems == block_b.systems and block_a.human.shape == block_b.human.shape
        if not same or not np.array_equal(block_a.human, block_b.human, equal_nan=True):
            raise ValueError(
                f"{block_a.code}: the two estimators were given different human scores"
            )
        a, b = _per_cell(block_a), _per_cell(block_b)
        used = ~(np.isnan(block_a.human) | np.isnan(a) | np.isnan(b))
        za = np.full(a.shape, np.nan)
        zb = np.full(b.shape, np.nan)
        if used.any():
            za[used] = _zscore(a[used])
            zb[used] = _zscore(b[used])
        for column in range(len(block_a.systems)):
            rows = np.flatnonzero(used[:, column])
            groups.append(
                _Group(
                    lp,
                    block_a.human[rows, column],
                    za[rows, column],
                    zb[rows, column],
                    rows,
                    column,
                )
            )
    return groups


def _signs(
    left: NDArray[np.signedinteger[Any]], right: NDArray[np.signedinteger[Any]]
) -> NDArray[np.int8]:
    """``sign(left_i − right_j)`` as an int8 (len(left) × len(right)) matrix, from the values'
    ranks: small integers subtract and take their sign much faster than floats compare."""
    difference = np.subtract.outer(left, right)
    out: NDArray[np.int8] = np.sign(difference, out=difference).astype(np.int8)
    return out


def _ranks(values: FloatArray) -> tuple[int, NDArray[np.signedinteger[Any]]]:
    """The number of distinct values and each value's rank among them (int16 where it fits)."""
    distinct, ranks = np.unique(values, return_inverse=True)
    dtype = np.int16 if distinct.size < np.iinfo(np.int16).max else np.int32
    return int(distinct.size), ranks.astype(dtype)


def _tied_pairs(counts: NDArray[np.int64]) -> NDArray[np.int64]:
    """Pairs with equal values, from how often each value occurs (along the last axis)."""
    tied: NDArray[np.int64] = (counts * (counts - 1) // 2).sum(axis=-1)
    return tied


class _Terms:
    """What every resample of one group shares (see the module docstring): the constants and
    linear terms of both numerators, the matrix ``Q`` (kept between blocks of resamples while
    ``keep_q`` allows, else rebuilt slice by slice), and both estimators' scores as codes of
    their distinct values, to count ties."""

    def __init__(self, group: _Group, keep_q: bool) -> None:
        self.group = group
        n = self.n = group.n
        self.pairs = n * (n - 1) // 2
        _n_levels, self.human_ranks = _ranks(group.human)
        self.human_ties = int(_tied_pairs(np.bincount(self.human_ranks).astype(np.int64)))
        self.defined = n >= 2 and self.pairs > self.human_ties
        if not self.defined:
            return
        self.n_codes, codes = _ranks(np.concatenate([group.a, group.b]))
        self.codes = codes.reshape(2, n)
        self.may_tie = self.n_codes < 2 * n
        row_aa, row_bb, row_ab = np.empty(n), np.empty(n), np.empty(n)
        col_ab = np.zeros(n)
        self.q: NDArray[np.float32] | None = None
        for start, stop in self._slices():
            q, p_aa, p_bb, p_ab = self._build(start, stop)
            row_aa[start:stop] = p_aa.sum(axis=1, dtype=np.int64)
            row_bb[start:stop] = p_bb.sum(axis=1, dtype=np.int64)
            row_ab[start:stop] = p_ab.sum(axis=1, dtype=np.int64)
            col_ab += p_ab.sum(axis=0, dtype=np.int64)
            if keep_q and stop - start == n:
                self.q = q
        self.constant = (float(row_aa.sum()), float(row_bb.sum()))
        self.linear = (2 * col_ab - 2 * row_aa, 2 * row_ab - 2 * row_bb)

    def _slices(self) -> list[tuple[int, int]]:
        step = max(1, _SLICE_ENTRIES // self.n)
        return [(start, min(self.n, start + step)) for start in range(0, self.n, step)]

    def _build(self, start: int, stop: int) -> tuple[NDArray[Any], ...]:
        """Rows start:stop of Q, P_aa, P_bb and P_ab."""
        h, (a, b) = self.human_ranks, self.codes
        human_signs = _signs(h[start:stop], h)
        p_aa = human_signs * _signs(a[start:stop], a)
        p_bb = human_signs * _signs(b[start:stop], b)
        p_ab = human_signs * _signs(a[start:stop], b)
        # P_ba = P_abᵀ; with one slice the transpose is at hand.
        p_ba = p_ab.T if stop - start == self.n else human_signs * _signs(b[start:stop], a)
        q = p_aa + p_bb
        q -= p_ab
        q -= p_ba
        return q.astype(np.float32), p_aa, p_bb, p_ab

    def _quadratic(self, swaps: BoolArray) -> FloatArray:
        """``wᵀQw`` for each row ``w`` of ``swaps``."""
        weights = swaps.astype(np.float32)
        out = np.zeros(swaps.shape[0])
        for start, stop in self._slices():
            q = self.q if self.q is not None else self._build(start, stop)[0]
            # Q is symmetric: its columns start:stop are these rows transposed. Each entry of
            # the product is an integer of at most 4n, exact in float32.
            partial = (weights @ q.T).astype(np.float64)
            out += np.einsum("rk,rk->r", partial, weights[:, start:stop])
        return out

    def _ties(self, chosen: NDArray[np.intp]) -> FloatArray:
        """Tied pairs in each row of value codes (R × n), counted with one bincount."""
        rows = chosen.shape[0]
        shifted = chosen + (np.arange(rows) * self.n_codes)[:, None]
        counts = np.bincount(shifted.ravel(), minlength=rows * self.n_codes)
        return _tied_pairs(counts.reshape(rows, self.n_codes)).astype(float)

    def taus(self, swaps: BoolArray) -> tuple[FloatArray, FloatArray]:
        """Tau_b of both estimators with the human scores after each row of ``swaps``."""
        rows = swaps.shape[0]
        if not self.defined:
            undefined = np.full(rows, np.nan)
            return undefined, undefined
        quadratic = self._quadratic(swaps)
        as_float = swaps.astype(np.float64)
        taus = []
        for side in (0, 1):
            twice = self.constant[side] + as_float @ self.linear[side] + quadratic
            ties = np.zeros(rows)
            if self.may_tie:
                mine, theirs = self.codes[side], self.codes[1 - side]
                ties = self._ties(np.where(swaps, theirs, mine))
            with np.errstate(divide="ignore", invalid="ignore"):
                tau = (twice / 2) / np.sqrt((self.pairs - ties) * (self.pairs - self.human_ties))
            taus.append(np.where(self.pairs - ties > 0, tau, np.nan))
        return taus[0], taus[1]


def _means(
    taus: FloatArray, lp_of_group: NDArray[np.intp], n_lps: int
) -> tuple[FloatArray, FloatArray]:
    """Eq. 1 for each row of ``taus`` (R × groups): per language pair, then overall."""
    defined = ~np.isnan(taus)
    sums = np.zeros((taus.shape[0], n_lps))
    counts = np.zeros((taus.shape[0], n_lps))
    np.add.at(sums.T, lp_of_group, np.where(defined, taus, 0.0).T)
    np.add.at(counts.T, lp_of_group, defined.T)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_lp = np.where(counts > 0, sums / counts, np.nan)
        lp_defined = ~np.isnan(per_lp)
        overall = np.where(
            lp_defined.any(axis=1),
            np.where(lp_defined, per_lp, 0.0).sum(axis=1) / lp_defined.sum(axis=1),
            np.nan,
        )
    return overall, per_lp


def _terms(groups: Sequence[_Group]) -> list[_Terms]:
    """Each group's terms; the first groups keep ``Q`` up to :data:`_KEPT_BYTES` in all."""
    terms = []
    kept = 0
    for group in groups:
        keep = kept + 4 * group.n**2 <= _KEPT_BYTES
        kept += 4 * group.n**2 if keep else 0
        terms.append(_Terms(group, keep))
    return terms


def _decs(terms: Sequence[_Terms], n_lps: int, swaps: Sequence[BoolArray]) -> dict[str, FloatArray]:
    rows = swaps[0].shape[0] if swaps else 1
    taus_x = np.full((rows, len(terms)), np.nan)
    taus_y = np.full((rows, len(terms)), np.nan)
    for g, (group_terms, mask) in enumerate(zip(terms, swaps, strict=True)):
        taus_x[:, g], taus_y[:, g] = group_terms.taus(mask)
    lp_of_group = np.array([t.group.lp for t in terms], dtype=np.intp)
    dec_x, lp_x = _means(taus_x, lp_of_group, n_lps)
    dec_y, lp_y = _means(taus_y, lp_of_group, n_lps)
    return {"a": dec_x, "b": dec_y, "a_per_lp": lp_x, "b_per_lp": lp_y}


def resampled_decs(
    blocks_a: Sequence[LanguagePairBlock],
    blocks_b: Sequence[LanguagePairBlock],
    swaps: Sequence[BoolArray],
) -> dict[str, FloatArray]:
    """DEC of both estimators after swapping their z-scored scores where ``swaps`` is True.

    ``swaps[k]`` is a (resamples × segments × systems) boolean array for language pair ``k``;
    cells not used (step 1) are ignored. Returns ``a`` and ``b`` (one DEC per resample) and
    ``a_per_lp``, ``b_per_lp`` (resamples × language pairs).
    """
    groups = _groups(blocks_a, blocks_b)
    masks = [np.asarray(swaps[g.lp], dtype=bool)[:, g.cells, g.column] for g in groups]
    return _decs(_terms(groups), len(blocks_a), masks)


@dataclass(frozen=True)
class PairTest:
    """One PERM-BOTH test of estimator ``a`` against ``b``, overall and per language pair."""

    delta: float  # DEC(a) − DEC(b) on the cells both scored; NaN where undefined
    n_resamples: int  # resamples drawn (early stopping may end before the maximum)
    at_least: int  # resamples whose delta was >= the observed one
    at_most: int
    delta_per_lp: dict[str, float] = field(default_factory=dict)
    at_least_per_lp: dict[str, int] = field(default_factory=dict)
    at_most_per_lp: dict[str, int] = field(default_factory=dict)

    def p_value(self, a_is_better: bool, lp: str | None = None) -> float:
        """The p-value that ``a`` (or ``b``) has the higher DEC; NaN where DEC is undefined."""
        delta = self.delta if lp is None else self.delta_per_lp.get(lp, math.nan)
        if math.isnan(delta) or not self.n_resamples:
            return math.nan
        if lp is None:
            count = self.at_least if a_is_better else self.at_most
        else:
            count = (self.at_least_per_lp if a_is_better else self.at_most_per_lp)[lp]
        return count / self.n_resamples

    def as_dict(self) -> dict[str, Any]:
        return {
            "delta": None if math.isnan(self.delta) else self.delta,
            "n_resamples": self.n_resamples,
            "at_least": self.at_least,
            "at_most": self.at_most,
            "delta_per_lp": {k: None if math.isnan(v) else v for k, v in self.delta_per_lp.items()},
            "at_least_per_lp": dict(self.at_least_per_lp),
            "at_most_per_lp": dict(self.at_most_per_lp),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PairTest:
        def number(value: Any) -> float:
            return math.nan if value is None else float(value)

        return cls(
            delta=number(data["delta"]),
            n_resamples=int(data["n_resamples"]),
            at_least=int(data["at_least"]),
            at_most=int(data["at_most"]),
            delta_per_lp={k: number(v) for k, v in data["delta_per_lp"].items()},
            at_least_per_lp={k: int(v) for k, v in data["at_least_per_lp"].items()},
            at_most_per_lp={k: int(v) for k, v in data["at_most_per_lp"].items()},
        )


def _draw(rng: np.random.Generator, rows: int, n: int) -> BoolArray:
    """Bernoulli(0.5) swaps from random bytes: a draw per eight cells."""
    if n == 0:
        return np.zeros((rows, 0), dtype=bool)
    width = (n + 7) // 8
    raw = np.frombuffer(rng.bytes(rows * width), dtype=np.uint8).reshape(rows, width)
    bits: BoolArray = np.unpackbits(raw, axis=1, count=n).astype(bool)
    return bits


def _decided(
    delta: FloatArray, at_least: NDArray[np.int64], at_most: NDArray[np.int64], k: int
) -> bool:
    """Step 4: every defined level's p-value (for the observed leader) is outside the band."""
    defined = ~np.isnan(delta)
    p = np.where(delta >= 0, at_least, at_most)[defined] / k
    return bool(np.all((p < EARLY_MIN) | (p > EARLY_MAX)))


def perm_both_pair(
    blocks_a: Sequence[LanguagePairBlock],
    blocks_b: Sequence[LanguagePairBlock],
    *,
    rng: np.random.Generator,
    n_resamples: int = N_RESAMPLES,
    block_size: int = BLOCK_SIZE,
) -> PairTest:
    """Steps 1–4 for two estimators on the same language pairs (blocks as for ``dec``)."""
    if n_resamples < 1 or block_size < 1:
        raise ValueError("n_resamples and block_size must be at least 1")
    terms = _terms(_groups(blocks_a, blocks_b))
    codes = [block.code for block in blocks_a]
    observed = _decs(terms, len(codes), [np.zeros((1, t.n), dtype=bool) for t in terms])
    # Level 0 is the overall DEC, levels 1.. the language pairs.
    delta = np.concatenate(
        [observed["a"] - observed["b"], (observed["a_per_lp"] - observed["b_per_lp"])[0]]
    )
    at_least = np.zeros(delta.size, dtype=np.int64)
    at_most = np.zeros(delta.size, dtype=np.int64)
    done = 0
    while done < n_resamples:
        rows = min(block_size, n_resamples - done)
        resampled = _decs(terms, len(codes), [_draw(rng, rows, t.n) for t in terms])
        deltas = np.column_stack(
            [resampled["a"] - resampled["b"], resampled["a_per_lp"] - resampled["b_per_lp"]]
        )
        at_least += (deltas >= delta).sum(axis=0)
        at_most += (deltas <= delta).sum(axis=0)
        done += rows
        if _decided(delta, at_least, at_most, done):
            break
    return PairTest(
        delta=float(delta[0]),
        n_resamples=done,
        at_least=int(at_least[0]),
        at_most=int(at_most[0]),
        delta_per_lp={code: float(d) for code, d in zip(codes, delta[1:], strict=True)},
        at_least_per_lp={code: int(c) for code, c in zip(codes, at_least[1:], strict=True)},
        at_most_per_lp={code: int(c) for code, c in zip(codes, at_most[1:], strict=True)},
    )


def work_units(blocks: Sequence[LanguagePairBlock]) -> int:
    """Σ n² over the (language pair, system) groups: one resample of a test costs about this
    many multiply-adds (the human scores decide the cells; estimators' gaps only shrink it)."""
    return int(
        sum(
            int((~np.isnan(block.human[:, m])).sum()) ** 2
            for block in blocks
            for m in range(len(block.systems))
        )
    )


def assign_ranks(p_values: NDArray[np.float64], alpha: float = ALPHA) -> list[int]:
    """Clusters of significance (Google's ``AssignRanks``, as in Freitag et al., 2024).

    ``p_values[i, j]`` (``i < j``, rows sorted by decreasing DEC) is the p-value that ``j`` is at
    least as good as ``i``. Walking down the list from rank 1, ``i`` starts a new cluster when an
    estimator from the start of the current cluster up to ``i`` beats it (``p <= alpha``); an
    estimator beaten only by one in an earlier cluster stays in the current one.
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError("the p-values must form a square matrix")
    ranks = []
    rank, start = 1, 0
    for i in range(p.shape[0]):
        if np.any(p[start:i, i] <= alpha):
            rank += 1
            start = i
        ranks.append(rank)
    return ranks


@dataclass(frozen=True)
class Ranking:
    """Estimators by decreasing DEC with their p-values and cluster ranks."""

    names: tuple[str, ...]
    dec: tuple[float, ...]
    p_values: FloatArray  # [i, j], i < j: p-value that names[j] is at least as good as names[i]
    ranks: tuple[int, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "order": list(self.names),
            "dec": list(self.dec),
            "ranks": list(self.ranks),
            "p_values": [
                [None if j <= i or math.isnan(v) else float(v) for j, v in enumerate(row)]
                for i, row in enumerate(self.p_values.tolist())
            ],
        }


def rank_by_significance(
    dec_by_name: Mapping[str, float],
    p_value: Callable[[str, str], float],
    alpha: float = ALPHA,
) -> Ranking:
    """Sort by decreasing DEC (undefined DEC left out, ties in the given order), fill the
    p-values with ``p_value(better, worse)`` and assign ranks."""
    names = [name for name, value in dec_by_name.items() if not math.isnan(value)]
    names.sort(key=lambda name: -dec_by_name[name])
    p = np.full((len(names), len(names)), np.nan)
    for i, better in enumerate(names):
        for j in range(i + 1, len(names)):
            p[i, j] = p_value(better, names[j])
    return Ranking(
        tuple(names), tuple(float(dec_by_name[n]) for n in names), p, tuple(assign_ranks(p, alpha))
    )


@dataclass(frozen=True)
class Significance:
    """The overall ranking and one per language pair, from the same tests."""

    overall: Ranking
    per_lp: dict[str, Ranking]
    tests: dict[tuple[str, str], PairTest]

    def as_dict(self) -> dict[str, Any]:
        """The rankings, and how many resamples each pair's test drew (in the overall order)."""
        order = self.overall.names
        used: list[list[int | None]] = [[None] * len(order) for _ in order]
        for i, better in enumerate(order):
            for j in range(i + 1, len(order)):
                key = (better, order[j]) if (better, order[j]) in self.tests else (order[j], better)
                used[i][j] = self.tests[key].n_resamples
        return {
            **self.overall.as_dict(),
            "resamples_used": used,
            "per_lp": {code: ranking.as_dict() for code, ranking in self.per_lp.items()},
        }


def rank_tests(
    dec_by_name: Mapping[str, float],
    dec_per_lp_by_name: Mapping[str, Mapping[str, float]],
    tests: Mapping[tuple[str, str], PairTest],
    alpha: float = ALPHA,
) -> Significance:
    """Rank estimators overall and per language pair from one test per pair of them.

    ``tests[(a, b)]`` tests ``a`` against ``b`` (either order of each pair will do); the DEC
    values (NaN where undefined) order the estimators, as the paper's tables do.
    """

    def p_value(lp: str | None) -> Callable[[str, str], float]:
        def lookup(better: str, worse: str) -> float:
            if (better, worse) in tests:
                return tests[(better, worse)].p_value(True, lp)
            return tests[(worse, better)].p_value(False, lp)

        return lookup

    codes = list(dict.fromkeys(code for per_lp in dec_per_lp_by_name.values() for code in per_lp))
    return Significance(
        overall=rank_by_significance(dec_by_name, p_value(None), alpha),
        per_lp={
            code: rank_by_significance(
                {n: dec_per_lp_by_name[n].get(code, math.nan) for n in dec_by_name},
                p_value(code),
                alpha,
            )
            for code in codes
        },
        tests=dict(tests),
    )


def perm_both_pvalues(
    blocks_by_name: Mapping[str, Sequence[LanguagePairBlock]],
    *,
    rng: np.random.Generator,
    n_resamples: int = N_RESAMPLES,
    alpha: float = ALPHA,
    block_size: int = BLOCK_SIZE,
) -> Significance:
    """Test every pair of estimators (each pair on its own child generator) and rank them."""
    names = list(blocks_by_name)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    tests = {
        (a, b): perm_both_pair(
            blocks_by_name[a],
            blocks_by_name[b],
            rng=child,
            n_resamples=n_resamples,
            block_size=block_size,
        )
        for (a, b), child in zip(pairs, rng.spawn(len(pairs)), strict=True)
    }
    results = {name: dec(blocks_by_name[name], with_pearson=False) for name in names}
    return rank_tests(
        {name: result.dec for name, result in results.items()},
        {name: result.dec_per_lp for name, result in results.items()},
        tests,
        alpha,
    )
