"""Server-side charts of the campaign dashboard, drawn with matplotlib to SVG (``core.charts``).

Every function takes plain numbers and returns an SVG document as text. ``svg.hashsalt`` is
fixed so that the same data gives the same bytes (cacheable, testable).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core import charts

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

_DASHBOARD: dict[RcKeyType, Any] = {"svg.hashsalt": "hardset-dashboard", "font.size": 9}
_BLUE = "#1f6feb"
_GREEN = "#2da44e"
_GREY = "#d0d7de"
_ORANGE = "#d97706"


def _empty(ax, message: str) -> None:
    charts.no_data(ax, message, color="#57606a")
    ax.set_xticks([])
    ax.set_yticks([])


def score_histogram(
    bin_counts: Sequence[int], *, title: str = "Score distribution", unit: str = "annotations"
) -> str:
    """Bar chart of 0–100 scores counted in ten bins of width 10 (the last bin includes 100).

    Takes counts rather than scores so that the database does the binning for any campaign size.
    """
    with charts.figure(5.2, 2.6, _DASHBOARD) as fig:
        ax = fig.subplots()
        if any(bin_counts):
            edges = list(range(0, 100, 10))
            ax.bar(edges, list(bin_counts), width=10, align="edge", color=_BLUE, edgecolor="white")
            ax.set_xlim(0, 100)
            ax.set_xlabel("score (0–100)")
            ax.set_ylabel(unit)
        else:
            _empty(ax, "no submitted scores yet")
        ax.set_title(title)
        return charts.svg(fig).decode()


def option_bars(counts: Mapping[str, int], *, title: str = "Answers per option") -> str:
    """Horizontal bars: how often each option of a choice campaign was selected."""
    with charts.figure(5.2, max(1.8, 0.3 * len(counts) + 1.0), _DASHBOARD) as fig:
        ax = fig.subplots()
        if counts:
            labels = list(counts)
            ax.barh(labels, [counts[k] for k in labels], color=_BLUE)
            ax.invert_yaxis()
            ax.set_xlabel("times selected")
        else:
            _empty(ax, "no submitted answers yet")
        ax.set_title(title)
        return charts.svg(fig).decode()


def annotator_progress(
    rows: Sequence[tuple[str, int, int]], *, title: str = "Progress per annotator"
) -> str:
    """Stacked horizontal bars per annotator: done (green) out of total (grey)."""
    with charts.figure(5.2, max(1.8, 0.28 * len(rows) + 1.0), _DASHBOARD) as fig:
        ax = fig.subplots()
        if rows:
            names = [r[0] for r in rows]
            done = [r[1] for r in rows]
            total = [max(r[2], r[1]) for r in rows]
            ax.barh(names, total, color=_GREY, label="available")
            ax.barh(names, done, color=_GREEN, label="done")
            ax.invert_yaxis()
            ax.set_xlabel("items")
            ax.legend(
                loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False, fontsize=8
            )
        else:
            _empty(ax, "no annotators enrolled yet")
        ax.set_title(title, pad=24 if rows else 6)  # room for the legend above the axes
        return charts.svg(fig).decode()


def progress_over_time(
    buckets: Sequence[tuple[datetime, int]], target: int, *, title: str = "Submitted annotations"
) -> str:
    """Cumulative submitted annotations over time (``buckets``: time, count) against the target."""
    with charts.figure(5.2, 2.6, _DASHBOARD) as fig:
        ax = fig.subplots()
        if buckets:
            ordered = sorted(buckets)
            times = [t for t, _ in ordered]
            cumulative = list(itertools.accumulate(n for _, n in ordered))
            # matplotlib converts datetimes through its units registry; the stub wants numbers.
            ax.step(times, cumulative, where="post", color=_BLUE)  # type: ignore[arg-type]
            if target:
                ax.axhline(target, color=_ORANGE, linestyle="--", linewidth=1, label="target")
                ax.legend(loc="lower right", frameon=False)
            ax.set_ylim(0, max(target, cumulative[-1]) * 1.05)
            ax.set_ylabel("annotations")
            fig.autofmt_xdate()
        else:
            _empty(ax, "nothing submitted yet")
        ax.set_title(title)
        return charts.svg(fig).decode()


def annotator_scores(
    rows: Sequence[tuple[str, float, float, int]], *, title: str = "Scores per annotator"
) -> str:
    """Mean ± standard deviation of each annotator's scores (name, mean, std, n).

    A harsh or lenient annotator stands out against the dashed campaign mean. Means and
    deviations come from database aggregates, so this scales to any number of annotations.
    """
    with charts.figure(5.2, max(1.8, 0.3 * len(rows) + 1.0), _DASHBOARD) as fig:
        ax = fig.subplots()
        if rows:
            names = [f"{r[0]} (n={r[3]})" for r in rows]
            means = [r[1] for r in rows]
            ax.errorbar(
                means, names, xerr=[r[2] for r in rows], fmt="o", color=_BLUE, ecolor="#8c959f",
                capsize=3,
            )  # fmt: skip
            total = sum(r[3] for r in rows)
            overall = sum(r[1] * r[3] for r in rows) / total if total else 0.0
            ax.axvline(overall, color=_ORANGE, linestyle="--", linewidth=1, label="campaign mean")
            ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False, fontsize=8)
            ax.invert_yaxis()
            ax.set_xlim(0, 100)
            ax.set_xlabel("score (0–100), mean ± std")
        else:
            _empty(ax, "no submitted scores yet")
        ax.set_title(title, pad=24 if rows else 6)  # room for the legend above the axes
        return charts.svg(fig).decode()
