"""Calibrating an automatic difficulty estimator with human scores (pure; numpy + scikit-learn).

A monotone (isotonic) mapping from automatic difficulty to human difficulty, fitted on the pairs
collected so far, is applied to every automatic estimate of a run. Monotone, because we trust the
estimator's ranking more than its scale; isotonic regression needs no functional form.
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
