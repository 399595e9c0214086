"""Replay allocation policies on a fully crossed human evaluation (issue 42). Pure numpy/scipy.

No Django import. The data are ``judgments`` of shape (systems, segments, raters): every recorded
human score of each (system, segment) cell, NaN where a cell has fewer raters (a dataset with one
score a cell has one rater). Judging a cell reveals its recorded scores one at a time, in an order
drawn per seed, so the k-th judgment of a cell is one rater's score and the cap of a cell is its
number of recorded scores.

For every policy and seed, :func:`replay` runs the policy from an empty campaign to the whole
budget (every recorded score) in batches of ``batch_size`` cells (the annotators working at once)
and, at each checkpoint budget, measures against the full data's ranking:

1. ``tau``: Kendall's tau-b (``scipy.stats.kendalltau``) between the systems' current means and
   their full-data means (a system not yet judged counts as the worst);
2. ``top``: whether the current top WMT cluster is the full data's (same members);
3. ``clusters``: the number of WMT clusters.

Clusters come from ``ranking.stats.permutation_pvalues`` over the judged cells' means (all pairs,
common segments only) and ``ranking.stats.wmt_clusters`` at alpha, with the full-data
reference's own draws (``reference_resamples`` sign flips under its seed) at every checkpoint:
common random numbers, so that with every score judged the checkpoint *is* the reference, and a
boundary p-value near alpha does not make "recovered" flip by Monte Carlo noise alone. The
permutation test is the ranking's PERM-BOTH family: it is vectorised, so a thousand resamples at
40 checkpoints cost milliseconds each, where the pair-by-pair Wilcoxon of WMT24 would dominate
the replay.

The stopping rule (:class:`ranking.allocation.StoppingRule`) is checked at each checkpoint; the
policy runs on after it fires so the curves reach the end, and the budget at which it fired and
whether its top cluster was the full data's are kept.

:func:`summarise` turns traces into per-policy numbers: the budget from which the top cluster
stays recovered, the budget from which tau stays at or above a threshold (means over seeds, with
how many seeds reached it), and the stopping budgets.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as scipy_stats

from ranking.allocation import AllocationState, Policy, StoppingRule, make_policy
from ranking.stats import (
    BoolArray,
    FloatArray,
    IntArray,
    json_safe,
    permutation_pvalues,
    system_means,
    wmt_clusters,
)

__all__ = [
    "PolicyTrace",
    "Reference",
    "ReplayData",
    "bands",
    "checkpoint_budgets",
    "policy_specs",
    "reference_ranking",
    "replay",
    "replay_many",
    "summarise",
    "top_cluster_stability",
]

MAX_SEEDS = 10_000


@dataclass(frozen=True)
class ReplayData:
    """Recorded scores, (systems, segments, raters), NaN where a cell has fewer raters."""

    judgments: FloatArray
    systems: list[str]
    prior: FloatArray | None = None

    def __post_init__(self) -> None:
        j = np.asarray(self.judgments, dtype=np.float64)
        if j.ndim == 2:
            j = j[:, :, None]
        if j.ndim != 3 or j.shape[0] < 2 or j.shape[1] < 1:
            raise ValueError("judgments must be (systems >= 2, segments, raters)")
        if np.isinf(j).any():
            raise ValueError("judgments must be finite or NaN")
        if len(self.systems) != j.shape[0]:
            raise ValueError(f"{len(self.systems)} names for {j.shape[0]} systems")
        # Raters packed to the front of each cell, so the k-th judgment of a cell exists iff
        # k < the cell's count.
        packed = np.sort(j, axis=2)
        object.__setattr__(self, "judgments", packed)
        if (self.cap_counts.sum(axis=1) == 0).any():
            raise ValueError("every system needs at least one recorded score")
        if self.prior is not None:
            prior = np.asarray(self.prior, dtype=np.float64)
            if prior.shape != j.shape[:2]:
                raise ValueError("the prior must be a (systems, segments) matrix")
            object.__setattr__(self, "prior", prior)

    @property
    def cap_counts(self) -> IntArray:
        """Recorded scores per cell."""
        return np.asarray(np.sum(~np.isnan(self.judgments), axis=2), dtype=np.intp)

    @property
    def full_scores(self) -> FloatArray:
        """Each cell's mean over all its recorded scores (NaN if none)."""
        n = self.cap_counts
        total = np.nansum(self.judgments, axis=2)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, total / np.maximum(n, 1), np.nan)

    @property
    def total(self) -> int:
        return int(self.cap_counts.sum())

    @property
    def cap(self) -> int:
        return int(self.judgments.shape[2])


@dataclass(frozen=True)
class Reference:
    """The full data's means, top cluster and clusters, and the test's draws that found them
    (``n_resamples`` under ``seed``): every checkpoint is tested with the same draws."""

    means: FloatArray
    top: frozenset[int]
    n_clusters: int
    clusters: IntArray
    n_resamples: int = 1000
    seed: int = 0


def reference_ranking(
    data: ReplayData, *, alpha: float = 0.05, n_resamples: int = 1000, seed: int = 0
) -> Reference:
    """What every checkpoint is compared with: the ranking of all recorded scores."""
    scores = data.full_scores
    means = system_means(scores)
    order = np.argsort(-means, kind="stable").astype(np.intp)
    p = permutation_pvalues(scores, n_resamples=n_resamples, rng=np.random.default_rng(seed))
    clusters = wmt_clusters(p, order, alpha)
    return Reference(
        means, frozenset(np.flatnonzero(clusters == 1).tolist()), int(clusters.max()), clusters,
        n_resamples, seed,
    )  # fmt: skip


def top_cluster_stability(
    data: ReplayData,
    reference: Reference,
    *,
    alpha: float = 0.05,
    draws: int = 200,
    n_resamples: int = 200,
    seed: int = 0,
) -> float:
    """Share of bootstrap resamples of the segments (another test set of the same size) whose
    top cluster, by the same test, is the full data's.

    The top-cluster measure asks a policy to find that cluster and keep it; where it rests on
    pairs near alpha, another draw of segments often gives another one, and no allocation can
    settle it early (bench/README.md, "How stable is the top cluster the replay asks for?": 0.15
    on WMT24 en-cs, 0.81 on a synthetic grid where ``settle`` needs 0.30x uniform's budget)."""
    if draws < 1:
        raise ValueError("draws must be at least 1")
    rng = np.random.default_rng(seed)
    n = data.judgments.shape[1]
    same = 0
    for _ in range(draws):
        resample = ReplayData(data.judgments[:, rng.integers(0, n, n)], data.systems)
        top = reference_ranking(resample, alpha=alpha, n_resamples=n_resamples, seed=seed).top
        same += top == reference.top
    return same / draws


def checkpoint_budgets(total: int, n_checkpoints: int = 40) -> IntArray:
    """Evenly spaced budgets up to the whole data (distinct, increasing, the last = total)."""
    if n_checkpoints < 1:
        raise ValueError("n_checkpoints must be at least 1")
    budgets = np.unique(np.round(np.linspace(0, total, n_checkpoints + 1)[1:]).astype(np.intp))
    return budgets[budgets > 0]


@dataclass
class PolicyTrace:
    """One policy, one seed: the measures at each checkpoint and the stop."""

    policy: str
    seed: int
    budgets: IntArray
    tau: FloatArray
    top: BoolArray
    clusters: IntArray
    stop_budget: int | None = None
    stop_top_correct: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _reveal_order(data: ReplayData, rng: np.random.Generator) -> FloatArray:
    """Each cell's recorded scores in a random order (NaN stay last)."""
    keys = rng.random(data.judgments.shape)
    keys[np.isnan(data.judgments)] = np.inf
    order = np.argsort(keys, axis=2)
    return np.take_along_axis(data.judgments, order, axis=2)


def _measure(state: AllocationState, reference: Reference, alpha: float) -> tuple[float, bool, int]:
    """Tau, top cluster recovered, clusters. The clusters come from the reference's own test
    draws (common random numbers): with every score judged the checkpoint is the reference, and
    what moves the measure between checkpoints is the data, not Monte Carlo noise of a boundary
    p-value near alpha."""
    means = state.system_means()
    shown = np.nan_to_num(means, nan=-np.inf)
    tau = float(
        scipy_stats.kendalltau(np.where(np.isinf(shown), -1e300, shown), reference.means).statistic
    )
    if np.isnan(means).any():
        return tau, False, 1
    order = np.argsort(-means, kind="stable").astype(np.intp)
    rng = np.random.default_rng(reference.seed)
    p = permutation_pvalues(state.cell_means(), n_resamples=reference.n_resamples, rng=rng)
    clusters = wmt_clusters(p, order, alpha)
    top = frozenset(np.flatnonzero(clusters == 1).tolist())
    return tau, top == reference.top, int(clusters.max())


def replay(
    data: ReplayData,
    policy: Policy,
    seed: int,
    reference: Reference,
    *,
    budgets: IntArray | None = None,
    batch_size: int = 15,
    alpha: float = 0.05,
    stopping: StoppingRule | None = None,
    use_prior: bool = True,
) -> PolicyTrace:
    """Run one policy from an empty campaign to the last checkpoint budget with one seed.

    The seed drives the order in which each cell reveals its raters, the policy's draws and the
    stopping rule's resamples, each from its own stream (``numpy.random.SeedSequence.spawn``), so
    two policies with the same seed see the same raters in the same order.
    """
    reveal_seq, policy_seq, test_seq = np.random.SeedSequence(seed).spawn(3)
    revealed = _reveal_order(data, np.random.default_rng(reveal_seq))
    policy_rng = np.random.default_rng(policy_seq)
    test_rng = np.random.default_rng(test_seq)
    caps = data.cap_counts
    state = AllocationState.empty(
        *caps.shape, cap=caps, prior=data.prior if use_prior else None, available=caps > 0
    )
    budgets = checkpoint_budgets(data.total) if budgets is None else np.asarray(budgets, np.intp)
    taus, tops, clusters = [], [], []
    stop_budget: int | None = None
    stop_correct: bool | None = None
    for budget in budgets.tolist():
        while state.used < budget:
            cells = policy.choose(state, policy_rng, min(batch_size, budget - state.used))
            if cells.size == 0:
                break
            scores = revealed[cells[:, 0], cells[:, 1], state.counts[cells[:, 0], cells[:, 1]]]
            state.record(cells, scores)
        tau, top, n_clusters = _measure(state, reference, alpha)
        taus.append(tau)
        tops.append(top)
        clusters.append(n_clusters)
        if stopping is not None and stop_budget is None and stopping.update(state, test_rng):
            stop_budget = state.used
            stop_correct = top
    return PolicyTrace(
        policy=policy.name, seed=seed, budgets=budgets[: len(taus)],
        tau=np.array(taus), top=np.array(tops, dtype=bool), clusters=np.array(clusters, np.intp),
        stop_budget=stop_budget, stop_top_correct=stop_correct,
    )  # fmt: skip


def replay_many(
    data: ReplayData,
    policies: Sequence[tuple[str, dict[str, Any]]],
    seeds: Sequence[int],
    *,
    goal: str = "top",
    alpha: float = 0.05,
    n_checkpoints: int = 40,
    batch_size: int = 15,
    n_resamples: int = 200,
    reference_resamples: int = 1000,
    patience: int = 3,
    on_trace: Callable[[PolicyTrace], None] | None = None,
    reference: Reference | None = None,
) -> tuple[Reference, list[PolicyTrace]]:
    """Every policy over every seed on the same checkpoints; a fresh stopping rule per run.

    ``reference``: the full data's ranking when already computed (a job replaying its seeds in
    chunks computes it once)."""
    if not seeds or len(seeds) > MAX_SEEDS:
        raise ValueError(f"give between 1 and {MAX_SEEDS} seeds")
    if reference is None:
        reference = reference_ranking(data, alpha=alpha, n_resamples=reference_resamples)
    budgets = checkpoint_budgets(data.total, n_checkpoints)
    traces = []
    for name, params in policies:
        for seed in seeds:
            policy = make_policy(name, **params)
            rule = StoppingRule(goal=goal, alpha=alpha, patience=patience, n_resamples=n_resamples)
            trace = replay(
                data, policy, int(seed), reference, budgets=budgets, batch_size=batch_size,
                alpha=alpha, stopping=rule,
            )  # fmt: skip
            trace.policy = _label(name, params)
            traces.append(trace)
            if on_trace is not None:
                on_trace(trace)
    return reference, traces


def policy_specs(names: Sequence[str], goal: str) -> list[tuple[str, dict[str, Any]]]:
    """Policies by name, ``settle`` aiming at ``goal`` (the default goal, ``top``, unnamed)."""
    return [(n, {"goal": goal} if n == "settle" and goal != "top" else {}) for n in names]


def _label(name: str, params: dict[str, Any]) -> str:
    if not params:
        return name
    return name + "(" + ", ".join(f"{k}={v}" for k, v in sorted(params.items())) + ")"


def _stays(flags: BoolArray) -> int | None:
    """Index of the first checkpoint from which ``flags`` holds to the end, None if never."""
    if flags.size == 0 or not flags[-1]:
        return None
    failing = np.flatnonzero(~flags)
    return int(failing[-1] + 1) if failing.size else 0


def summarise(traces: Sequence[PolicyTrace], *, tau_threshold: float = 0.9) -> dict[str, Any]:
    """Per policy: mean budget (over seeds that got there) from which the full-data top cluster
    stays recovered and tau stays >= the threshold, seeds that got there, stopping budgets, and
    the mean curves. JSON-safe."""
    by_policy: dict[str, list[PolicyTrace]] = {}
    for trace in traces:
        by_policy.setdefault(trace.policy, []).append(trace)
    out: dict[str, Any] = {}
    for name, runs in by_policy.items():
        top_budgets = [_budget_at(t, _stays(t.top)) for t in runs]
        tau_budgets = [_budget_at(t, _stays(t.tau >= tau_threshold)) for t in runs]
        stops = [t.stop_budget for t in runs if t.stop_budget is not None]
        correct = [bool(t.stop_top_correct) for t in runs if t.stop_budget is not None]
        out[name] = json_safe({
            "seeds": len(runs),
            "top_budget": _mean(top_budgets), "top_reached": _count(top_budgets),
            "tau_budget": _mean(tau_budgets), "tau_reached": _count(tau_budgets),
            "stop_budget": _mean(stops), "stopped": len(stops),
            "stop_top_correct": sum(correct),
            "top_budgets": top_budgets, "tau_budgets": tau_budgets,
            "curve": {
                "budgets": runs[0].budgets, "tau": np.mean([t.tau for t in runs], axis=0),
                "top": np.mean([t.top for t in runs], axis=0),
                "clusters": np.mean([t.clusters for t in runs], axis=0),
            },
        })  # fmt: skip
    return out


# What each measure can be: Kendall τ, the share of seeds that recovered the top cluster, and
# the number of clusters (at least one).
_MEASURE_RANGES = {"tau": (-1.0, 1.0), "top": (0.0, 1.0), "clusters": (1.0, math.inf)}


def bands(traces: Sequence[PolicyTrace], *, z: float = 1.96) -> dict[str, Any]:
    """Per policy and measure (tau, top, clusters): the mean over seeds at each checkpoint and a
    band of ``z`` standard errors of that mean (95 % by default), for a chart. JSON-safe."""
    by_policy: dict[str, list[PolicyTrace]] = {}
    for trace in traces:
        by_policy.setdefault(trace.policy, []).append(trace)
    out: dict[str, Any] = {}
    for name, runs in by_policy.items():
        curve: dict[str, Any] = {"budgets": runs[0].budgets}
        for measure, (lowest, highest) in _MEASURE_RANGES.items():
            values = np.array([getattr(t, measure) for t in runs], dtype=np.float64)
            mean = values.mean(axis=0)
            spread = z * values.std(axis=0, ddof=1) / math.sqrt(len(runs)) if len(runs) > 1 else 0
            # A normal band can leave the measure's range (a share above 1, τ below −1): clip it.
            low, high = (
                np.clip(mean - spread, lowest, highest),
                np.clip(mean + spread, lowest, highest),
            )
            curve[measure] = {"mean": mean, "low": low, "high": high}
        out[name] = json_safe(curve)
    return out


def _budget_at(trace: PolicyTrace, index: int | None) -> int | None:
    return None if index is None else int(trace.budgets[index])


def _mean(values: Sequence[int | None]) -> float:
    got = [v for v in values if v is not None]
    return float(np.mean(got)) if got else math.nan


def _count(values: Sequence[int | None]) -> int:
    return sum(v is not None for v in values)


def as_judgments(scores: ArrayLike) -> FloatArray:
    """A (systems, segments) score matrix as one-rater judgments."""
    return np.asarray(scores, dtype=np.float64)[:, :, None]
