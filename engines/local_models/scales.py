"""How a regression model's raw output becomes the platform's 0–100 quality (higher = better).

Pure Python + numpy. The mapping is an engine parameter (``output_scale``) because the raw
scale is a property of how the checkpoint was trained, which its files do not say:

=============  =====================================  ==========================================
scale          raw output                             quality on 0–100
=============  =====================================  ==========================================
``metricx``    MetricX-23/24 error, 0 (perfect)..25   ``100 − 4·clip(x, 0, 25)``
``unit``       0..1, higher better (COMET-like DA)    ``100·clip(x, 0, 1)``
``percent``    0..100, higher better (ESA/DA-like)    ``clip(x, 0, 100)``
``sigmoid``    unbounded, higher better (z-scores,    ``100 / (1 + e^(−x))``: monotone, so the
               e.g. Sentinel-src / PreCOMET-style)    ranking (all DEC reads) is kept
``linear``     anything                               ``clip(slope·x + intercept, 0, 100)``
=============  =====================================  ==========================================

A non-finite raw output is refused (the caller raises a permanent engine error): a NaN would
otherwise turn into a quality of 0 or 100 silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["OUTPUT_SCALES", "to_quality"]

OUTPUT_SCALES = ("metricx", "unit", "percent", "sigmoid", "linear")


def to_quality(raw: Sequence[float], scale: str, params: Mapping[str, Any]) -> list[float]:
    """Map raw regression outputs to 0–100 quality; ValueError on a non-finite output."""
    values = np.asarray(raw, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        raise ValueError("the model produced a score that is not a finite number")
    if scale == "metricx":
        quality = 100.0 - 4.0 * np.clip(values, 0.0, 25.0)
    elif scale == "unit":
        quality = 100.0 * np.clip(values, 0.0, 1.0)
    elif scale == "percent":
        quality = np.clip(values, 0.0, 100.0)
    elif scale == "sigmoid":
        quality = 100.0 / (1.0 + np.exp(-values))
    elif scale == "linear":
        slope = float(params.get("slope", 1.0))
        intercept = float(params.get("intercept", 0.0))
        quality = np.clip(slope * values + intercept, 0.0, 100.0)
    else:
        raise ValueError(f"unknown output scale {scale!r}")
    return [float(q) for q in quality]
