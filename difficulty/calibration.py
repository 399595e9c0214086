"""Calibrating an automatic difficulty estimator with human scores (pure; numpy + scikit-learn).

A monotone (isotonic) mapping from automatic difficulty to human difficulty, fitted on the pairs
collected so far, is applied to every automatic estimate of a run. Monotone, because we trust the
estimator's ranking more than its scale; isotonic regression needs no functional form.

How well the calibration does is measured on pairs it was not fitted on
(:func:`cross_validated_predictions`): a map scored on its own training pairs reproduces them
almost exactly, so its in-sample error says nothing about the next text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

MIN_PAIRS = 3


@dataclass(frozen=True)
class Calibration:
    """A fitted mapping, stored as its breakpoints so it serializes to JSON and applies anywhere."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    n_pairs: int

    def apply(self, automatic: np.ndarray) -> np.ndarray:
        values = np.asarray(automatic, dtype=np.float64)
        if not self.x:
            return values.copy()
        # np.interp clips outside the fitted range, like IsotonicRegression(out_of_bounds="clip").
        mapped: np.ndarray = np.interp(values, np.asarray(self.x), np.asarray(self.y))
        return mapped

    def to_dict(self) -> dict[str, Any]:
        return {"x": list(self.x), "y": list(self.y), "n_pairs": self.n_pairs}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibration:
        return cls(tuple(data["x"]), tuple(data["y"]), int(data["n_pairs"]))


def fit_calibration(automatic: np.ndarray, human: np.ndarray) -> Calibration:
    """Fit an increasing isotonic map automatic → human difficulty.

    1. Drop pairs with a missing value.
    2. With fewer than ``MIN_PAIRS`` pairs, return the identity (no evidence to move anything).
    3. Fit ``IsotonicRegression(increasing=True, out_of_bounds="clip")`` and keep its thresholds.
    """
    auto = np.asarray(automatic, dtype=np.float64)
    hum = np.asarray(human, dtype=np.float64)
    if auto.shape != hum.shape:
        raise ValueError("automatic and human scores must have the same length")
    keep = np.isfinite(auto) & np.isfinite(hum)
    auto, hum = auto[keep], hum[keep]
    if len(auto) < MIN_PAIRS:
        return Calibration((), (), len(auto))
    # scikit-learn and scipy are imported where they are used: loaded with the module, they cost
    # every process that imports the search app over a second of CPU at start-up.
    from sklearn.isotonic import IsotonicRegression

    model = IsotonicRegression(increasing=True, out_of_bounds="clip").fit(auto, hum)
    return Calibration(
        tuple(float(v) for v in model.X_thresholds_),
        tuple(float(v) for v in model.y_thresholds_),
        len(auto),
    )


@dataclass(frozen=True)
class Agreement:
    kendall_tau: float | None
    mean_abs_error: float | None
    n_pairs: int


def agreement(estimate: np.ndarray, human: np.ndarray) -> Agreement:
    """Kendall tau-b and mean absolute error between estimates and human difficulty."""
    est = np.asarray(estimate, dtype=np.float64)
    hum = np.asarray(human, dtype=np.float64)
    keep = np.isfinite(est) & np.isfinite(hum)
    est, hum = est[keep], hum[keep]
    if len(est) < 2:
        return Agreement(None, None, len(est))
    from scipy.stats import kendalltau

    tau = kendalltau(est, hum, variant="b").statistic
    tau_value = None if np.isnan(tau) else float(tau)
    return Agreement(tau_value, float(np.mean(np.abs(est - hum))), len(est))


N_FOLDS = 5
LEAVE_ONE_OUT_BELOW = 20
"""Under this many pairs each held-out pair gets its own fold (leave-one-out): five folds of
a handful of pairs would fit each map on too few of them."""


@dataclass(frozen=True)
class HeldOut:
    """Out-of-fold calibrated estimates: ``predictions[i]`` comes from a map fitted without
    pair ``i``; ``NaN`` where a pair had a missing value. ``n_folds`` is 0 when there were too
    few pairs to fit anything (the predictions are then the automatic values, as the map is the
    identity)."""

    predictions: np.ndarray
    n_folds: int

    @property
    def method(self) -> str:
        if not self.n_folds:
            return "not fitted"
        n = int(np.isfinite(self.predictions).sum())
        return "leave-one-out" if self.n_folds == n else f"{self.n_folds}-fold"


def cross_validated_predictions(
    automatic: np.ndarray,
    human: np.ndarray,
    rng: np.random.Generator,
    *,
    n_folds: int = N_FOLDS,
) -> HeldOut:
    """Calibrated estimates of each pair by a map fitted on the other folds.

    1. Keep the pairs with both values (the others stay ``NaN``).
    2. ``n_folds`` folds of a random permutation drawn from ``rng``; leave-one-out under
       ``LEAVE_ONE_OUT_BELOW`` pairs. Under ``MIN_PAIRS`` pairs nothing is fitted (no folds):
       the automatic values are returned.
    3. For each fold, :func:`fit_calibration` on the other folds (the identity when they hold
       under ``MIN_PAIRS`` pairs, as for the full fit) and apply it to the fold.
    """
    auto = np.asarray(automatic, dtype=np.float64)
    hum = np.asarray(human, dtype=np.float64)
    if auto.shape != hum.shape:
        raise ValueError("automatic and human scores must have the same length")
    out = np.full(auto.shape, np.nan)
    kept = np.flatnonzero(np.isfinite(auto) & np.isfinite(hum))
    n = len(kept)
    if n < MIN_PAIRS:
        out[kept] = auto[kept]
        return HeldOut(out, 0)
    folds = n if n < LEAVE_ONE_OUT_BELOW else min(n_folds, n)
    order = kept[rng.permutation(n)]
    for held in np.array_split(order, folds):
        train = np.setdiff1d(kept, held, assume_unique=True)
        out[held] = fit_calibration(auto[train], hum[train]).apply(auto[held])
    return HeldOut(out, folds)
