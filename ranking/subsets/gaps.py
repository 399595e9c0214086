"""Gaps between MT models per generation method, seed 001 §3.3 and Table 4. Pure numpy.

No Django import. Seed 001 translates each method's texts with several target models and reads
the table row by row: the Seeds baseline gives three Gemini/Gemma models nearly equal quality
(89.3, 89.9, 89.2), Zeroshot spreads them (74.9, 77.5, 77.2) and MT-breaker further (54.6, 58.9,
57.1): "larger gaps between models generally lead to more statistically significant outcomes".
For one score table (translators × texts, NaN where a translator has no score) and groups of
texts (one per method), :func:`model_gaps` gives:

1. a common order of the translators, best first by their mean over every text (the columns of
   Table 4 stay in one order across rows, so gaps compare across methods);
2. per group: each translator's mean over the group's texts (a row of Table 4) and how many
   texts it was scored on;
3. per group: the gap between translators adjacent in the common order, ``mean[k] - mean[k+1]``
   (negative where the group reverses them), their mean absolute value and the spread
   ``max - min`` of the group's means.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ranking.stats import as_scores, json_safe, order_by_mean, system_means

__all__ = ["model_gaps"]


def _mean_abs(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(np.abs(finite).mean()) if finite.size else math.nan


def _spread(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.max() - finite.min()) if finite.size else math.nan


def model_gaps(scores: ArrayLike, groups: Sequence[tuple[str, ArrayLike]]) -> dict[str, Any]:
    """Seed 001 Table 4 for ``groups`` of columns of ``scores`` (see the module docstring).

    Returns a JSON-safe dict::

        {"order": [row, ...],                      # translators (rows of scores), best first
         "pooled_means": [...],                    # in that order
         "rows": [{"label", "size", "means", "n", "gaps", "mean_abs_gap", "spread"}, ...]}
    """
    x = as_scores(scores)
    order = order_by_mean(x)
    rows = []
    for label, columns in groups:
        cols = np.asarray(columns, dtype=np.intp)
        if cols.ndim != 1 or (cols.size and (cols.min() < 0 or cols.max() >= x.shape[1])):
            raise ValueError(f"group {label!r}: columns must be indices of the texts")
        sub = x[:, cols]
        means = system_means(sub)[order] if cols.size else np.full(order.size, np.nan)
        gaps = means[:-1] - means[1:]
        rows.append(
            {
                "label": label,
                "size": int(cols.size),
                "means": means,
                "n": np.sum(~np.isnan(sub), axis=1)[order],
                "gaps": gaps,
                "mean_abs_gap": _mean_abs(gaps),
                "spread": _spread(means),
            }
        )
    result: dict[str, Any] = json_safe(
        {"order": order, "pooled_means": system_means(x)[order], "rows": rows}
    )
    return result
