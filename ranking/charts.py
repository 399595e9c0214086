"""Charts of a ranking (matplotlib to SVG, ``core.charts``): the pairwise p-value heat map and
the means with their intervals, clusters separated by rules.

System names come from imported files: ``$`` would start matplotlib's mathtext (and a lone one
fails to parse), so names are drawn with it escaped, without control characters, and shortened.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from core import charts
from ranking.results import ranked_rows

__all__ = ["heatmap_svg", "means_svg"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_MAX_LABEL = 32
_BLUE = "#3465a4"
_RULE = "#cc0000"


def _label(name: str) -> str:
    text = _CONTROL.sub(" ", name)
    if len(text) > _MAX_LABEL:
        text = text[: _MAX_LABEL - 1] + "…"
    return text.replace("$", r"\$")


def heatmap_svg(result: dict[str, Any]) -> bytes:
    """P[row, column]: the one-sided p-value that the row system is better than the column
    system, on a log colour scale; significant cells (p < alpha) are outlined, cluster
    boundaries drawn as lines, untested pairs left blank."""
    from matplotlib.colors import LogNorm

    rows = ranked_rows(result)
    n = len(rows)
    alpha = float(result["settings"].get("alpha", 0.05))
    p = np.array(
        [[np.nan if v is None else v for v in line] for line in result["ranking"]["p_values"]],
        dtype=np.float64,
    ).reshape(n, n)
    labels = [_label(row.system) for row in rows]
    size = 2.6 + 0.42 * n
    with charts.figure(size + 1.4, size) as figure:
        axes = figure.add_subplot()
        shown = np.ma.masked_invalid(np.clip(p, 1e-6, 1.0))
        image = axes.imshow(shown, cmap="viridis", norm=LogNorm(vmin=1e-6, vmax=1.0))
        colourbar = figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04)
        colourbar.set_label("p-value (row better than column)")
        colourbar.ax.axhline(alpha, color=_RULE, linewidth=1.5)
        significant = np.argwhere(np.isfinite(p) & (p < alpha))
        for i, j in significant:
            axes.add_patch(_cell_outline(i, j))
        if n <= 14:
            for i, j in np.argwhere(np.isfinite(p)):
                axes.text(j, i, _short(p[i, j]), ha="center", va="center", fontsize=7,
                          color="white" if p[i, j] < 0.01 else "black")  # fmt: skip
        for k, row in enumerate(rows):
            if row.ends_cluster:
                axes.axhline(k + 0.5, color=_RULE, linewidth=1.2)
                axes.axvline(k + 0.5, color=_RULE, linewidth=1.2)
        axes.set_xticks(range(n), labels, rotation=60, ha="right")
        axes.set_yticks(range(n), labels)
        axes.set_title(f"Pairwise one-sided p-values (outlined: p < {alpha:g})", loc="left")
        return charts.svg(figure)


def _cell_outline(i: int, j: int) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="white", linewidth=1.2)


def _short(value: float) -> str:
    return f"{value:.0e}" if value < 0.001 else f"{value:.3f}".lstrip("0")


def means_svg(result: dict[str, Any]) -> bytes:
    """Each system's mean with its interval, best at the top, a rule between clusters."""
    rows = ranked_rows(result)
    n = len(rows)
    y = np.arange(n)
    means = np.array([np.nan if r.mean is None else r.mean for r in rows], dtype=np.float64)
    low = np.array([np.nan if r.low is None else r.low for r in rows], dtype=np.float64)
    high = np.array([np.nan if r.high is None else r.high for r in rows], dtype=np.float64)
    errors = np.vstack([np.nan_to_num(means - low), np.nan_to_num(high - means)])
    with charts.figure(7.5, 1.0 + 0.36 * n) as figure:
        axes = figure.add_subplot()
        axes.errorbar(means, y, xerr=errors, fmt="o", color=_BLUE, capsize=3, markersize=4)
        for k, row in enumerate(rows):
            if row.ends_cluster:
                axes.axhline(k + 0.5, color=_RULE, linestyle="--", linewidth=1.0)
        axes.set_yticks(y, [f"{r.rank_range}  {_label(r.system)}" for r in rows])
        axes.invert_yaxis()
        confidence = round(100 * result.get("confidence", 0.95))
        axes.set_xlabel(f"mean score ({confidence}% t interval)")
        axes.set_title("Means; dashed lines separate significance clusters", loc="left")
        return charts.svg(figure)
