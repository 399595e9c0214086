"""Difficulty Estimation Correlation (DEC) and hardest-subset selection (seed 002).

Pure numpy/scipy: no Django import. Everything works on *language-pair blocks*: for one language
pair ``l``, a matrix ``human[x, m] = d_{m,l}(x)`` of human scores (rows = source segments,
columns = the systems ``M_l`` being evaluated, NaN where a system has no score for a segment) and
the estimator's quality-like scores ``estimate`` (higher = easier), either one per segment
(source-only estimators) or one per segment *and* system.

DEC, seed 002 Eq. 1 and App. A, "Group-by-System":

1. for each language pair ``l`` and each system ``m`` in ``M_l``: Kendall's tau_b between the
   estimator's per-segment scores and that system's human scores, over the segments where both
   exist (``scipy.stats.kendalltau``, ``variant="b"``: pairs tied in both rankings are ignored,
   pairs tied in one ranking count in that side of the denominator, exactly App. A's Eq. 2);
2. the mean over the systems of ``l``;
3. the mean over language pairs, each with equal weight.

A correlation is *undefined* when fewer than two segments remain or when either side is
constant (tau_b's denominator is 0; scipy returns NaN). Undefined correlations are left out of
the means and listed in :attr:`DecResult.undefined`; a language pair with none defined is left out
of the overall mean and DEC is NaN when nothing is defined (e.g. a constant estimator).

Pearson correlation is reported in the same grouping. The confidence interval is a percentile
bootstrap over segments: each resample draws the segments of every language pair with
replacement (the same draw for all of that pair's systems) and recomputes DEC.

Hardest subset, seed 002 §6 and App. C Eq. 3–4: per language pair, take the ``B`` segments with
the lowest estimator score (the mean over systems where the estimator varies by system) and report
AvgScore (mean human score over the selected segments × systems) and %Perfect (percentage of
those cells whose human score equals the perfect score, 100 for ESA); then average the language
pairs with equal weight. Random selection is the baseline drawn with an injected generator.

Over 500 lines on purpose: DEC, its oracles and the hardest subset share the language-pair block
and its NaN conventions, and the seed's equations read best side by side.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "DecResult",
    "LanguagePairBlock",
    "RandomSelection",
    "SubsetResult",
    "blocks_from_arrays",
    "bootstrap_dec",
    "dec",
    "dec_from_arrays",
    "full_set_scores",
    "hardest_subset",
    "kendall_tau_b",
    "oracle_source",
    "oracle_source_language",
    "pearson_r",
    "percentile_interval",
    "random_selection",
    "subset_budget",
]


@dataclass(frozen=True)
class LanguagePairBlock:
    """One language pair: ``human`` is (segments × systems), ``estimate`` per segment or cell."""

    code: str
    human: np.ndarray
    estimate: np.ndarray
    systems: tuple[str, ...]

    def __post_init__(self) -> None:
        human = np.asarray(self.human, dtype=float)
        estimate = np.asarray(self.estimate, dtype=float)
        if human.ndim != 2:
            raise ValueError(f"{self.code}: human scores must be a (segments × systems) matrix")
        if human.shape[1] != len(self.systems):
            raise ValueError(
                f"{self.code}: {human.shape[1]} score columns but {len(self.systems)} systems"
            )
        if estimate.shape not in {(human.shape[0],), human.shape}:
            raise ValueError(
                f"{self.code}: estimate shape {estimate.shape} fits neither "
                f"({human.shape[0]},) nor {human.shape}"
            )
        object.__setattr__(self, "human", human)
        object.__setattr__(self, "estimate", estimate)
        object.__setattr__(self, "systems", tuple(self.systems))

    @property
    def n_segments(self) -> int:
        return int(self.human.shape[0])

    def estimate_for(self, column: int) -> np.ndarray:
        """The estimator's scores that system ``column``'s human scores are compared with."""
        return self.estimate if self.estimate.ndim == 1 else self.estimate[:, column]

    def selection_scores(self) -> np.ndarray:
        """One score per segment for subset selection (mean over systems when per cell)."""
        if self.estimate.ndim == 1:
            return self.estimate
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN row stays NaN
            means: np.ndarray = np.nanmean(self.estimate, axis=1)
            return means

    def take(self, rows: np.ndarray) -> LanguagePairBlock:
        return LanguagePairBlock(self.code, self.human[rows], self.estimate[rows], self.systems)

    def with_estimate(self, estimate: np.ndarray) -> LanguagePairBlock:
        return LanguagePairBlock(self.code, self.human, estimate, self.systems)


@dataclass(frozen=True)
class DecResult:
    """DEC (Eq. 1) with its per-language-pair and per-system parts, and Pearson alike."""

    dec: float
    dec_per_lp: dict[str, float]
    per_system: dict[str, dict[str, float]]
    pearson: float
    pearson_per_lp: dict[str, float]
    pearson_per_system: dict[str, dict[str, float]]
    n_pairs: dict[str, dict[str, int]]
    undefined: list[tuple[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "dec": _json_float(self.dec),
            "dec_per_lp": {lp: _json_float(v) for lp, v in self.dec_per_lp.items()},
            "per_system": {
                lp: {m: _json_float(v) for m, v in systems.items()}
                for lp, systems in self.per_system.items()
            },
            "pearson": _json_float(self.pearson),
            "pearson_per_lp": {lp: _json_float(v) for lp, v in self.pearson_per_lp.items()},
            "n_pairs": self.n_pairs,
            "undefined": [list(pair) for pair in self.undefined],
        }


def _json_float(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _paired(
    x_in: Sequence[float] | np.ndarray, y_in: Sequence[float] | np.ndarray
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    x = np.asarray(x_in, dtype=float)
    y = np.asarray(y_in, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"need two 1-D arrays of one length, got {x.shape} and {y.shape}")
    keep = ~(np.isnan(x) | np.isnan(y))
    if keep.all():
        return x, y
    return x[keep], y[keep]


# scipy.stats.kendalltau without its axis/NaN-policy wrapper: on a few hundred segments the
# wrapper costs more than the statistic itself, and it would only do what we already do (drop
# NaN pairs, pass 1-D arrays). The test suite checks it equals the public function.
# scipy.stats is imported on first use, not with the module: it costs every process that loads
# the difficulty app about 0.5 s of CPU at start-up.
@functools.cache
def _kendalltau() -> Any:
    from scipy import stats

    return getattr(stats.kendalltau, "__wrapped__", stats.kendalltau)


def kendall_tau_b(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Kendall's tau_b (seed 002 App. A) over the pairs where neither value is NaN.

    NaN when fewer than two pairs remain or either side is constant (tau_b is undefined there).
    """
    x, y = _paired(x, y)
    if x.size < 2:
        return math.nan
    # Only the statistic is used; the asymptotic p-value is the cheap one, but it divides by
    # n - 2, so two pairs take scipy's default method.
    method = "asymptotic" if x.size > 2 else "auto"
    with warnings.catch_warnings():
        # scipy warns about constant input; we report it as undefined (NaN) instead.
        warnings.simplefilter("ignore")
        result = _kendalltau()(x, y, variant="b", method=method)
    return float(result.statistic)


def pearson_r(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson's r over the pairs where neither value is NaN; NaN when undefined."""
    x, y = _paired(x, y)
    if x.size < 2:
        return math.nan
    dx = x - x.mean()
    dy = y - y.mean()
    denominator = math.sqrt(float(dx @ dx) * float(dy @ dy))
    if denominator == 0.0:
        return math.nan
    return float(np.clip(float(dx @ dy) / denominator, -1.0, 1.0))


def _mean_defined(values: Sequence[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return float(np.mean(defined)) if defined else math.nan


def _dec_from_groups(
    groups: Iterable[tuple[str, str, np.ndarray, np.ndarray]], with_pearson: bool
) -> DecResult:
    """Eq. 1 from (language pair, system, estimates, human scores) groups, in order."""
    per_system: dict[str, dict[str, float]] = {}
    pearson_per_system: dict[str, dict[str, float]] = {}
    n_pairs: dict[str, dict[str, int]] = {}
    undefined: list[tuple[str, str]] = []
    for code, system, estimates, human in groups:
        x, y = _paired(estimates, human)
        n_pairs.setdefault(code, {})[system] = int(x.size)
        tau = per_system.setdefault(code, {})[system] = kendall_tau_b(x, y)
        if math.isnan(tau):
            undefined.append((code, system))
        pearson_per_system.setdefault(code, {})[system] = (
            pearson_r(x, y) if with_pearson else math.nan
        )
    if not per_system:
        raise ValueError("DEC needs at least one language pair")
    dec_per_lp = {code: _mean_defined(list(taus.values())) for code, taus in per_system.items()}
    pearson_per_lp = {
        code: _mean_defined(list(rs.values())) for code, rs in pearson_per_system.items()
    }
    return DecResult(
        dec=_mean_defined(list(dec_per_lp.values())),
        dec_per_lp=dec_per_lp,
        per_system=per_system,
        pearson=_mean_defined(list(pearson_per_lp.values())),
        pearson_per_lp=pearson_per_lp,
        pearson_per_system=pearson_per_system,
        n_pairs=n_pairs,
        undefined=undefined,
    )


def dec(blocks: Sequence[LanguagePairBlock], *, with_pearson: bool = True) -> DecResult:
    """DEC of seed 002 Eq. 1 over language-pair blocks, plus Pearson in the same grouping."""
    if not blocks:
        raise ValueError("DEC needs at least one language pair")
    codes = [block.code for block in blocks]
    if len(set(codes)) != len(codes):
        raise ValueError(f"language pairs must be distinct, got {codes}")
    groups = (
        (block.code, system, block.estimate_for(column), block.human[:, column])
        for block in blocks
        for column, system in enumerate(block.systems)
    )
    return _dec_from_groups(groups, with_pearson)


def blocks_from_arrays(
    estimates: Sequence[float] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    system_ids: Sequence[Any] | np.ndarray,
    lp_ids: Sequence[Any] | np.ndarray,
    segment_ids: Sequence[Any] | np.ndarray | None = None,
) -> list[LanguagePairBlock]:
    """Pivot flat cells (one per segment × system × language pair) into language-pair blocks.

    Without ``segment_ids`` each cell is its own segment row; that is enough for DEC (within one
    system every cell is a different segment) but not for a bootstrap, which must draw the same
    segments for all systems. A cell given twice is an error.
    """
    estimates, human, system_ids, lp_ids = _cell_arrays(estimates, human, system_ids, lp_ids)
    n = estimates.shape[0]
    if segment_ids is None:
        segment_ids = np.arange(n)
    segment_ids = np.asarray(segment_ids)
    if segment_ids.shape != (n,):
        raise ValueError(f"segment_ids has shape {segment_ids.shape}; estimates has ({n},)")
    if n == 0:
        raise ValueError("no cells given")

    lp_values, lp_index = np.unique(lp_ids, return_inverse=True)
    blocks = []
    for k, lp in enumerate(lp_values):
        cells = np.flatnonzero(lp_index == k)
        systems, column = np.unique(system_ids[cells], return_inverse=True)
        segments, row = np.unique(segment_ids[cells], return_inverse=True)
        shape = (len(segments), len(systems))
        flat = row * shape[1] + column
        if np.unique(flat).size != flat.size:
            raise ValueError(f"language pair {lp}: a (segment, system) cell is given twice")
        human_matrix = np.full(shape, np.nan)
        estimate_matrix = np.full(shape, np.nan)
        human_matrix[row, column] = human[cells]
        estimate_matrix[row, column] = estimates[cells]
        blocks.append(
            LanguagePairBlock(
                str(lp), human_matrix, estimate_matrix, tuple(str(s) for s in systems)
            )
        )
    return blocks


def _cell_arrays(*columns: Sequence[Any] | np.ndarray) -> tuple[np.ndarray, ...]:
    """(estimates, human, system_ids, lp_ids) as arrays, the scores as floats; refused unless
    all are as long as ``estimates``."""
    estimates, human, system_ids, lp_ids = columns
    arrays = (np.asarray(estimates, dtype=float), np.asarray(human, dtype=float),
              np.asarray(system_ids), np.asarray(lp_ids))  # fmt: skip
    n = arrays[0].shape[0]
    for name, array in zip(("human", "system_ids", "lp_ids"), arrays[1:], strict=True):
        if array.shape != (n,):
            raise ValueError(f"{name} has shape {array.shape}; estimates has ({n},)")
    return arrays


def dec_from_arrays(
    estimates: Sequence[float] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    system_ids: Sequence[Any] | np.ndarray,
    lp_ids: Sequence[Any] | np.ndarray,
    *,
    with_pearson: bool = True,
) -> DecResult:
    """DEC (Eq. 1) from flat arrays, one entry per (segment, system, language pair) cell.

    For an estimator checked against human scores collected elsewhere (e.g. before and after
    calibrating it on annotators' scores): ``estimates[i]`` is the estimator's quality-like score
    for the source of cell ``i``, ``human[i]`` the human score of system ``system_ids[i]``'s
    translation of it into language pair ``lp_ids[i]`` (NaN where missing). Each (pair, system)
    group must hold one cell per segment. With a single system and language pair this is simply
    Kendall's tau_b. Language pairs and systems come out in sorted order.
    """
    estimates, human, system_ids, lp_ids = _cell_arrays(estimates, human, system_ids, lp_ids)
    n = estimates.shape[0]
    if n == 0:
        raise ValueError("no cells given")
    lps, lp_index = np.unique(lp_ids, return_inverse=True)
    systems, system_index = np.unique(system_ids, return_inverse=True)
    # One stable sort puts every (pair, system) group in one contiguous run.
    order = np.lexsort((system_index, lp_index))
    key = lp_index[order] * systems.size + system_index[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    stops = np.r_[starts[1:], n]
    groups = (
        (
            str(lps[lp_index[order[a]]]),
            str(systems[system_index[order[a]]]),
            estimates[order[a:b]],
            human[order[a:b]],
        )
        for a, b in zip(starts, stops, strict=True)
    )
    return _dec_from_groups(groups, with_pearson)


def bootstrap_dec(
    blocks: Sequence[LanguagePairBlock], rng: np.random.Generator, n_resamples: int
) -> np.ndarray:
    """DEC of ``n_resamples`` bootstrap resamples of segments (per language pair).

    Each resample draws every language pair's segments with replacement, the same draw for all
    of that pair's systems and for the estimator. Returns the DEC values (NaN where undefined).
    """
    if n_resamples < 0:
        raise ValueError("n_resamples must be >= 0")
    samples = np.empty(n_resamples)
    for i in range(n_resamples):
        resampled = [
            block.take(rng.integers(0, block.n_segments, block.n_segments)) for block in blocks
        ]
        samples[i] = dec(resampled, with_pearson=False).dec
    return samples


def percentile_interval(samples: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval; NaN samples (undefined DEC) are left out."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    samples = np.asarray(samples, dtype=float)
    samples = samples[~np.isnan(samples)]
    if samples.size == 0:
        return (math.nan, math.nan)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(samples, [tail, 100.0 - tail])
    return (float(low), float(high))


# --- Reference oracles (seed 002 App. E) -----------------------------------------------------


def oracle_source_language(human: np.ndarray) -> np.ndarray:
    """Seed 002 App. E "Oracle (source text + target language)": each segment's mean human
    score over the language pair's systems M_l."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a segment no system scored stays NaN
        means: np.ndarray = np.nanmean(np.asarray(human, dtype=float), axis=1)
        return means


def oracle_source(
    humans: Sequence[np.ndarray], source_keys: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Seed 002 App. E "Oracle (source text only)": the mean human score over every system and
    language pair that translated the same source.

    ``humans[k]`` is language pair k's (segments × systems) matrix and ``source_keys[k][x]``
    names the source of its segment x; the mean is over all scored cells of that source.
    """
    if len(source_keys) != len(humans):
        raise ValueError("one array of source keys per language pair is needed")
    matrices = [np.asarray(h, dtype=float) for h in humans]
    keys = [np.asarray(k) for k in source_keys]
    for k, (human, block_keys) in enumerate(zip(matrices, keys, strict=True)):
        if human.ndim != 2 or block_keys.shape != (human.shape[0],):
            raise ValueError(f"language pair {k}: one source key per matrix row is needed")
    all_keys, inverse = np.unique(np.concatenate(keys), return_inverse=True)
    sums = np.zeros(all_keys.size)
    counts = np.zeros(all_keys.size)
    starts = np.cumsum([0] + [h.shape[0] for h in matrices])
    for human, start, stop in zip(matrices, starts[:-1], starts[1:], strict=True):
        scored = ~np.isnan(human)
        np.add.at(sums, inverse[start:stop], np.where(scored, human, 0.0).sum(axis=1))
        np.add.at(counts, inverse[start:stop], scored.sum(axis=1))
    means = np.full(all_keys.size, np.nan)
    np.divide(sums, counts, out=means, where=counts > 0)
    return [means[inverse[start:stop]] for start, stop in itertools.pairwise(starts)]


# --- Hardest subset (seed 002 §6, App. C Eq. 3–4) --------------------------------------------


@dataclass(frozen=True)
class SubsetResult:
    """AvgScore (Eq. 3) and %Perfect (Eq. 4, as a percentage) averaged over language pairs."""

    avg_score: float
    pct_perfect: float
    per_lp: dict[str, dict[str, float]]
    # The selected segment rows of each language pair, hardest first (empty for the full set).
    rows: dict[str, list[int]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "avg_score": _json_float(self.avg_score),
            "pct_perfect": _json_float(self.pct_perfect),
            "per_lp": {
                lp: {k: _json_float(v) if isinstance(v, float) else v for k, v in part.items()}
                for lp, part in self.per_lp.items()
            },
        }
        if self.rows:
            out["rows"] = self.rows
        return out


def subset_budget(n_segments: int, fraction: float) -> int:
    """B for a language pair: ``fraction`` of its segments, rounded half up, at least one."""
    if not 0.0 < fraction <= 1.0:
        raise ValueError("the subset fraction must be in (0, 1]")
    if n_segments == 0:
        return 0
    return max(1, min(n_segments, math.floor(fraction * n_segments + 0.5)))


def _cells_summary(human: np.ndarray, perfect: float) -> tuple[float, float]:
    scored = human[~np.isnan(human)]
    if scored.size == 0:
        return (math.nan, math.nan)
    return (float(scored.mean()), float((scored == perfect).mean() * 100.0))


def _summarise(
    parts: dict[str, dict[str, float]],
) -> tuple[float, float]:
    return (
        _mean_defined([part["avg_score"] for part in parts.values()]),
        _mean_defined([part["pct_perfect"] for part in parts.values()]),
    )


def hardest_subset(
    blocks: Sequence[LanguagePairBlock], fraction: float = 0.25, perfect: float = 100.0
) -> SubsetResult:
    """Select each language pair's B lowest-scored segments and score them (Eq. 3–4).

    Ties at the cut are broken by segment order (stable sort), so a result is reproducible;
    segments the estimator gave no score are never selected.
    """
    parts: dict[str, dict[str, float]] = {}
    selected: dict[str, list[int]] = {}
    for block in blocks:
        budget = subset_budget(block.n_segments, fraction)
        scores = block.selection_scores()
        ranked = np.argsort(np.where(np.isnan(scores), np.inf, scores), kind="stable")
        rows = ranked[: min(budget, int((~np.isnan(scores)).sum()))]
        selected[block.code] = [int(row) for row in rows]
        avg, pct = _cells_summary(block.human[rows], perfect)
        parts[block.code] = {
            "avg_score": avg,
            "pct_perfect": pct,
            "budget": int(rows.size),
            "n_segments": block.n_segments,
        }
    avg, pct = _summarise(parts)
    return SubsetResult(avg, pct, parts, selected)


def full_set_scores(blocks: Sequence[LanguagePairBlock], perfect: float = 100.0) -> SubsetResult:
    """AvgScore and %Perfect of the whole dataset, per language pair and averaged."""
    parts = {}
    for block in blocks:
        avg, pct = _cells_summary(block.human, perfect)
        parts[block.code] = {
            "avg_score": avg,
            "pct_perfect": pct,
            "budget": block.n_segments,
            "n_segments": block.n_segments,
        }
    avg, pct = _summarise(parts)
    return SubsetResult(avg, pct, parts)


@dataclass(frozen=True)
class RandomSelection:
    """Random subsets of the same budgets: mean over runs and a t interval (seed 002 Fig. 2)."""

    avg_score: float
    pct_perfect: float
    avg_score_interval: tuple[float, float]
    pct_perfect_interval: tuple[float, float]
    runs: int
    confidence: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "avg_score": _json_float(self.avg_score),
            "pct_perfect": _json_float(self.pct_perfect),
            "avg_score_interval": [_json_float(v) for v in self.avg_score_interval],
            "pct_perfect_interval": [_json_float(v) for v in self.pct_perfect_interval],
            "runs": self.runs,
            "confidence": self.confidence,
        }


def _t_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    values = values[~np.isnan(values)]
    if values.size < 2:
        return (math.nan, math.nan)
    from scipy import stats

    half = stats.t.ppf(0.5 + confidence / 2.0, values.size - 1) * stats.sem(values)
    return (float(values.mean() - half), float(values.mean() + half))


def random_selection(
    blocks: Sequence[LanguagePairBlock],
    rng: np.random.Generator,
    fraction: float = 0.25,
    runs: int = 10,
    perfect: float = 100.0,
    confidence: float = 0.99,
) -> RandomSelection:
    """``runs`` uniformly random subsets per language pair, each scored like a hardest subset."""
    if runs < 1:
        raise ValueError("runs must be >= 1")
    avg_runs = np.empty(runs)
    pct_runs = np.empty(runs)
    for run in range(runs):
        parts = {}
        for block in blocks:
            budget = subset_budget(block.n_segments, fraction)
            rows = rng.choice(block.n_segments, size=budget, replace=False)
            avg, pct = _cells_summary(block.human[rows], perfect)
            parts[block.code] = {"avg_score": avg, "pct_perfect": pct}
        avg_runs[run], pct_runs[run] = _summarise(parts)
    return RandomSelection(
        avg_score=_mean_defined(list(avg_runs)),
        pct_perfect=_mean_defined(list(pct_runs)),
        avg_score_interval=_t_interval(avg_runs, confidence),
        pct_perfect_interval=_t_interval(pct_runs, confidence),
        runs=runs,
        confidence=confidence,
    )
