"""Empirical-Bayes priors on topic means: the shrinkage behind ``recommend="posterior"``.

Two models, both fitted from the data of the run itself (empirical Bayes, Robbins 1956):

- ``NormalPrior``: mu_t ~ N(m, tau^2), fitted by moments (Efron & Morris, 1975). Linear
  shrinkage; the posterior is closed-form.
- ``GridPrior``: a discrete prior on a grid of atoms, fitted by the nonparametric maximum
  likelihood EM of Jiang & Zhang (2009) / Koenker & Mizera (2014). Seed 000's topic means are a
  skewed mixture (§3.3, Fig. 4) whose top topics sit in a thin, wide tail; a normal prior shrinks
  those far too hard towards the bulk, the grid prior does not.

Both take the noise variance sigma^2 of one text's difficulty as given (``noise_sd``) or from
the pooled within-topic variance of topics pulled twice or more.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from search.bandit.codec import decode_array, encode_array
from search.bandit.stats import ArmStats

__all__ = ["GridPrior", "NormalPrior", "PriorKind", "PriorModel", "fit_prior", "prior_from_dict"]

PriorKind = Literal["grid", "normal"]

# Below this many degrees of freedom the pooled within-topic variance is too noisy to trust.
_MIN_NOISE_DOF = 30
_N_ATOMS = 96
_N_BINS = 256
_EM_ITERATIONS = 150
# Share of the grid prior spread evenly over its atoms. The NPMLE is sparse and starves the
# tails, so a well-pulled top topic was shrunk far below its data: the 95 % intervals of the
# top-10 covered the true mean in 43 % of cases at 100k topics (77 % at 3.2k). With this floor
# they cover 93 % (85 %), and EB-UCB's picks stay the same within noise (4 seeds each). A 1 %
# floor let a single lucky draw outrank steady evidence.
_TAIL_FLOOR = 0.003
# Posterior tables: rows for counts 0..32, then every ~25 % up to 8192; x-bar on 256 points.
_TABLE_ROWS = np.unique(
    np.concatenate([np.arange(33), np.round(32 * 1.25 ** np.arange(1, 33)).astype(np.int64)])
)
_TABLE_ROWS = _TABLE_ROWS[_TABLE_ROWS <= 8192]
_TABLE_POINTS = 256


class PriorModel(Protocol):
    # Read-only members: the priors are frozen dataclasses.
    @property
    def kind(self) -> str: ...
    @property
    def mean(self) -> float: ...
    @property
    def var(self) -> float: ...
    @property
    def noise_var(self) -> float: ...

    def posterior(
        self, counts: np.ndarray, sums: np.ndarray, extra: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]: ...

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class NormalPrior:
    """mu_t ~ N(mean, var); one text's difficulty ~ N(mu_t, noise_var)."""

    mean: float
    var: float
    noise_var: float
    kind: str = "normal"

    def posterior(
        self, counts: np.ndarray, sums: np.ndarray, extra: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance per topic (conjugate normal-normal).

        ``extra`` adds pulls that are pending: they shrink the variance, not the mean, as in
        batch UCB with hallucinated observations (Desautels et al., 2014).
        """
        n = counts.astype(np.float64)
        precision = 1.0 / self.var + n / self.noise_var
        mean = (self.mean / self.var + sums / self.noise_var) / precision
        if extra is not None:
            precision = precision + extra / self.noise_var
        return mean, 1.0 / precision

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "normal", "mean": self.mean, "var": self.var, "noise_var": self.noise_var}


@dataclass(frozen=True, eq=False)
class GridPrior:
    """mu_t takes value atoms[j] with probability weights[j]; noise N(0, noise_var).

    The posterior of a topic depends on (count, mean) only, so it is tabulated once per fit
    (means on a 256-point grid with linear interpolation; counts 0..32 exactly, then rows 25 %
    apart up to 8192, a count using the nearest row below it, which slightly overstates its
    variance) and looked up in O(1) per topic; counts above 8192 are computed exactly.
    """

    atoms: np.ndarray
    weights: np.ndarray
    noise_var: float
    kind: str = "grid"
    _tables: tuple[np.ndarray, np.ndarray, np.ndarray] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "_tables", self._build_tables())

    @property
    def mean(self) -> float:
        return float(self.weights @ self.atoms)

    @property
    def var(self) -> float:
        return float(self.weights @ (self.atoms - self.mean) ** 2)

    def _build_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sd = float(np.sqrt(self.noise_var))
        xs = np.linspace(self.atoms[0] - 4 * sd, self.atoms[-1] + 4 * sd, _TABLE_POINTS)
        counts = _TABLE_ROWS.astype(np.float64)
        mean, var = self._exact(counts[:, None], xs[None, :])
        return xs, mean, var

    def _exact(self, n: np.ndarray, xbar: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior moments for broadcastable arrays of counts and means."""
        n = n[..., None]
        d = xbar[..., None] - self.atoms
        logp = np.log(np.maximum(self.weights, 1e-300)) - n * d * d / (2.0 * self.noise_var)
        logp -= logp.max(axis=-1, keepdims=True)
        p = np.exp(logp)
        p /= p.sum(axis=-1, keepdims=True)
        mean = p @ self.atoms
        var = np.maximum(p @ (self.atoms**2) - mean * mean, 0.0)
        return mean, var

    def posterior(
        self, counts: np.ndarray, sums: np.ndarray, extra: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance; pending ``extra`` pulls are hallucinated at the mean."""
        n = counts.astype(np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            xbar = np.where(n > 0, sums / np.maximum(n, 1), self.mean)
        if extra is not None:
            n = n + extra.astype(np.int64)
        xs, mean_t, var_t = self._tables
        pos = np.clip((xbar - xs[0]) / (xs[1] - xs[0]), 0.0, xs.shape[0] - 1.000001)
        lo = pos.astype(np.int64)
        frac = pos - lo
        row = np.where(n <= 32, n, np.searchsorted(_TABLE_ROWS, n, side="right") - 1)
        mean = mean_t[row, lo] * (1 - frac) + mean_t[row, lo + 1] * frac
        var = var_t[row, lo] * (1 - frac) + var_t[row, lo + 1] * frac
        big = np.flatnonzero(n > _TABLE_ROWS[-1])
        if big.shape[0]:
            mean[big], var[big] = self._exact(n[big].astype(np.float64), xbar[big])
        return mean, var

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "grid",
            "atoms": encode_array(self.atoms),
            "weights": encode_array(self.weights),
            "noise_var": self.noise_var,
        }


def prior_from_dict(data: dict[str, Any]) -> PriorModel:
    if data["kind"] == "normal":
        return NormalPrior(float(data["mean"]), float(data["var"]), float(data["noise_var"]))
    return GridPrior(
        decode_array(data["atoms"]), decode_array(data["weights"]), float(data["noise_var"])
    )


def fit_prior(
    stats: ArmStats, kind: PriorKind = "grid", noise_sd: float | None = None
) -> PriorModel | None:
    """Fit the prior from a run's statistics; None until two topics have been scored.

    1. The first pull of each topic is an unbiased draw of the marginal d = mu_t + e (topics
       are first pulled in uniformly random order), so its moments estimate E[mu_t] and
       Var[mu_t] + noise_var.
    2. noise_var is ``noise_sd**2`` when given, else the pooled within-topic variance of topics
       with two or more pulls; with fewer than 30 degrees of freedom half of the marginal
       variance is assumed to be noise.
    3. normal: Var[mu_t] = marginal - noise_var, floored at 5 % of the marginal so the prior
       never collapses to a point mass.
    4. grid: EM for the mixing weights on 96 atoms spanning the first pulls (binned into 256
       bins), started from uniform weights (Jiang & Zhang, 2009).
    """
    if stats.first_n < 2:
        return None
    m = stats.first_sum / stats.first_n
    marginal = max(stats.first_sumsq / stats.first_n - m * m, 1e-9)
    noise_var = float(noise_sd) ** 2 if noise_sd is not None else _pooled_noise_var(stats)
    if noise_var is None:
        noise_var = 0.5 * marginal
    noise_var = max(noise_var, 1e-9)
    if kind == "normal" or stats.first_values.shape[0] < 2:
        return NormalPrior(m, max(marginal - noise_var, 0.05 * marginal), noise_var)
    return _fit_grid(stats.first_values, noise_var)


def _fit_grid(values: np.ndarray, noise_var: float) -> GridPrior:
    lo, hi = float(values.min()), float(values.max())
    if hi - lo < 1e-9:
        return GridPrior(np.array([lo, lo + 1e-9]), np.array([1.0, 0.0]), noise_var)
    hist, edges = np.histogram(values, bins=_N_BINS, range=(lo, hi))
    centres = 0.5 * (edges[:-1] + edges[1:])
    used = hist > 0
    centres, hist = centres[used], hist[used].astype(np.float64)
    atoms = np.linspace(lo, hi, _N_ATOMS)
    lik = np.exp(-((centres[:, None] - atoms[None, :]) ** 2) / (2.0 * noise_var))
    weights = np.full(_N_ATOMS, 1.0 / _N_ATOMS)
    total = hist.sum()
    for _ in range(_EM_ITERATIONS):
        mix = np.maximum(lik @ weights, 1e-300)
        weights = weights * (lik.T @ (hist / mix)) / total
    weights /= weights.sum()
    weights = (1.0 - _TAIL_FLOOR) * weights + _TAIL_FLOOR / _N_ATOMS
    return GridPrior(atoms, weights, noise_var)


def _pooled_noise_var(stats: ArmStats) -> float | None:
    repeated = np.flatnonzero(stats.counts >= 2)
    dof = int(stats.counts[repeated].sum()) - repeated.shape[0]
    if dof < _MIN_NOISE_DOF:
        return None
    n = stats.counts[repeated].astype(np.float64)
    ss = stats.sumsq[repeated] - stats.sums[repeated] ** 2 / n
    return float(max(ss.sum(), 0.0) / dof)
