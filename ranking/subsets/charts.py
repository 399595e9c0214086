"""The curves of a discrimination analysis (SVG through core.charts; seed 000 Fig. 8's panels).

One panel per measure. A curve (a dataset's hardest segments) is drawn over the subset fraction:
the subset as a line with points, random subsets of the same size as their mean (dashed) and a
band of ± one standard deviation, the full set as a dotted level. Fixed subsets (a version, the
methods of an MT-breaker comparison) are drawn per subset: the subset as a point, the random
subsets as their mean with a ± sd bar beside it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from core import charts
from ranking.subsets.exports import FIELD_LABELS

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

__all__ = ["curves_svg"]

_STYLE: dict[RcKeyType, Any] = {"svg.hashsalt": "hardset-discrimination", "font.size": 9}

_SUBSET = "#cc0000"
_RANDOM = "#3465a4"
_FULL = "#555753"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_COLUMNS = 4


def _label(text: str, limit: int = 28) -> str:
    """Shown as text: no control characters, ``$`` escaped (it would start mathtext)."""
    clean = _CONTROL.sub(" ", text)
    clean = clean if len(clean) <= limit else clean[: limit - 1] + "…"
    return clean.replace("$", r"\$")


def _values(points: list[dict[str, Any]], part: str, field: str) -> np.ndarray:
    return np.array(
        [np.nan if p[part].get(field) is None else p[part][field] for p in points],
        dtype=np.float64,
    )


def _curve(axes: Any, subset: dict[str, Any], field: str, label: bool) -> None:
    points = subset["points"]
    x = 100 * np.array([p["fraction"] for p in points], dtype=np.float64)
    mean, sd = _values(points, "random_mean", field), _values(points, "random_sd", field)
    sd = np.nan_to_num(sd)
    axes.fill_between(x, mean - sd, mean + sd, color=_RANDOM, alpha=0.2, linewidth=0,
                      label="random ± sd" if label else None)  # fmt: skip
    axes.plot(x, mean, color=_RANDOM, linestyle="--", linewidth=1,
              label="random subsets (mean)" if label else None)  # fmt: skip
    axes.plot(x, _values(points, "subset", field), color=_SUBSET, marker="o", markersize=3,
              label=_label(subset["label"], 40) if label else None)  # fmt: skip
    axes.set_xlabel("subset size (% of segments)")


def _fixed(axes: Any, subsets: list[dict[str, Any]], field: str, label: bool) -> None:
    points = [s["points"][0] for s in subsets]
    x = np.arange(len(points), dtype=np.float64)
    mean, sd = _values(points, "random_mean", field), _values(points, "random_sd", field)
    axes.errorbar(
        x + 0.12,
        mean,
        yerr=np.nan_to_num(sd),
        fmt="s",
        color=_RANDOM,
        capsize=3,
        markersize=4,
        label="random subsets, same size (mean ± sd)" if label else None,
    )
    axes.plot(x - 0.12, _values(points, "subset", field), "o", color=_SUBSET, markersize=5,
              label="the subset" if label else None)  # fmt: skip
    axes.set_xticks(x, [_label(s["label"], 24) for s in subsets], rotation=30, ha="right")
    axes.set_xlim(-0.6, len(points) - 0.4)


def curves_svg(result: dict[str, Any]) -> bytes:
    """Every measure of every subset against random subsets of its size (see the module)."""
    from matplotlib.ticker import MaxNLocator

    subsets = [s for s in result["subsets"] if s["points"]]
    curve = any(s["curve"] and len(s["points"]) > 1 for s in subsets)
    fields = list(FIELD_LABELS)
    rows = -(-len(fields) // _COLUMNS)
    with charts.figure(3.3 * _COLUMNS, 2.9 * rows + 0.7, _STYLE) as figure:
        figure.set_layout_engine("constrained")
        panels = figure.subplots(rows, _COLUMNS, squeeze=False).ravel()
        for k, (axes, field) in enumerate(zip(panels, fields, strict=False)):
            if curve:
                for subset in subsets:
                    _curve(axes, subset, field, label=k == 0)
            elif subsets:
                _fixed(axes, subsets, field, label=k == 0)
            full = result["full"].get(field)
            if full is not None:
                axes.axhline(full, color=_FULL, linestyle=":", linewidth=1,
                             label="full set" if k == 0 else None)  # fmt: skip
            axes.set_title(FIELD_LABELS[field], loc="left", fontsize=9)
            if field.startswith("n_clusters"):
                axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        for axes in panels[len(fields) :]:
            axes.set_visible(False)
        figure.legend(loc="outside lower center", ncols=4, frameon=False)
        return charts.svg(figure)
