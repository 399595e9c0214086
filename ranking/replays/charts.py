"""The curves of a replay run (SVG through core.charts): one panel per measure, budget against
Kendall τ to the full-data ranking, top-cluster recovery and the number of clusters found; one
line per policy (the mean over seeds) with a band (95 % of that mean)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from core import charts

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

__all__ = ["MEASURES", "curves_svg"]

_STYLE: dict[RcKeyType, Any] = {"svg.hashsalt": "hardset-replay", "font.size": 9}
MEASURES = {
    "tau": "Kendall τ to the full-data ranking",
    "top": "Seeds whose top cluster is the full data's",
    "clusters": "Clusters found (WMT rule)",
}


def _values(values: list[float | None]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def curves_svg(result: dict[str, Any]) -> bytes:
    """Every policy's curves (see the module)."""
    curves = result["curves"]
    n_clusters = result["reference"]["n_clusters"]
    with charts.figure(4.0 * len(MEASURES), 3.6, _STYLE) as figure:
        figure.set_layout_engine("constrained")
        panels = figure.subplots(1, len(MEASURES), squeeze=False).ravel()
        for k, (axes, (measure, title)) in enumerate(zip(panels, MEASURES.items(), strict=True)):
            for policy, curve in curves.items():
                x = np.array(curve["budgets"], dtype=np.float64)
                band = curve[measure]
                (line,) = axes.plot(x, _values(band["mean"]), linewidth=1.4,
                                    label=policy if k == 0 else None)  # fmt: skip
                axes.fill_between(x, _values(band["low"]), _values(band["high"]),
                                  color=line.get_color(), alpha=0.18, linewidth=0)  # fmt: skip
            if measure == "clusters":
                axes.axhline(n_clusters, color="#555753", linestyle=":", linewidth=1,
                             label="full data" if k == 0 else None)  # fmt: skip
            axes.set_title(title, loc="left", fontsize=9)
            axes.set_xlabel("budget (judgments)")
        figure.legend(loc="outside lower center", ncols=5, frameon=False)
        return charts.svg(figure)
