"""Server-side charts of the campaign dashboard, drawn with matplotlib to SVG (``core.charts``).

Every function takes plain numbers and returns an SVG document as text. ``svg.hashsalt`` is
fixed so that the same data gives the same bytes (cacheable, testable).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from core import charts

if TYPE_CHECKING:
    from matplotlib.axes import Axes
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


def _chart(
    height: float, title: str, draw: Callable[[Axes], None], *, empty: str = "", title_pad=6
) -> str:
    """One dashboard axes as SVG: ``draw(ax)`` fills it, or ``empty`` says why there is
    nothing to draw yet."""
    with charts.figure(5.2, height, _DASHBOARD) as fig:
        ax = fig.subplots()
        if empty:
            _empty(ax, empty)
        else:
            draw(ax)
        ax.set_title(title, pad=title_pad)
        return charts.svg(fig).decode()


def score_histogram(
    bin_counts: Sequence[int], *, title: str = "Score distribution", unit: str = "annotations"
) -> str:
    """Bar chart of 0–100 scores counted in ten bins of width 10 (the last bin includes 100).

    Takes counts rather than scores so that the database does the binning for any campaign size.
    """

    def draw(ax: Axes) -> None:
        edges = list(range(0, 100, 10))
        ax.bar(edges, list(bin_counts), width=10, align="edge", color=_BLUE, edgecolor="white")
        ax.set_xlim(0, 100)
        ax.set_xlabel("score (0–100)")
        ax.set_ylabel(unit)

    empty = "" if any(bin_counts) else "no submitted scores yet"
    return _chart(2.6, title, draw, empty=empty)


def option_bars(counts: Mapping[str, int], *, title: str = "Answers per option") -> str:
    """Horizontal bars: how often each option of a choice campaign was selected."""

    def draw(ax: Axes) -> None:
        labels = list(counts)
        ax.barh(labels, [counts[k] for k in labels], color=_BLUE)
        ax.invert_yaxis()
        ax.set_xlabel("times selected")

    empty = "" if counts else "no submitted answers yet"
    return _chart(max(1.8, 0.3 * len(counts) + 1.0), title, draw, empty=empty)


def annotator_progress(
    rows: Sequence[tuple[str, int, int]], *, title: str = "Progress per annotator"
) -> str:
    """Stacked horizontal bars per annotator: done (green) out of total (grey)."""

    def draw(ax: Axes) -> None:
        names = [r[0] for r in rows]
        done = [r[1] for r in rows]
        total = [max(r[2], r[1]) for r in rows]
        ax.barh(names, total, color=_GREY, label="available")
        ax.barh(names, done, color=_GREEN, label="done")
        ax.invert_yaxis()
        ax.set_xlabel("items")
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False, fontsize=8)

    height = max(1.8, 0.28 * len(rows) + 1.0)
    if not rows:
        return _chart(height, title, draw, empty="no annotators enrolled yet")
    return _chart(height, title, draw, title_pad=24)  # room for the legend above the axes


def progress_over_time(
    buckets: Sequence[tuple[datetime, int]],
    target: int,
    *,
    bucket: timedelta = timedelta(minutes=1),
    title: str = "Submitted annotations",
) -> str:
    """Cumulative submitted annotations over time (``buckets``: start of each ``bucket``-wide
    interval, count) against the target, on a time axis spanning the submissions (UTC)."""
    from matplotlib import dates

    def draw(ax: Axes) -> None:
        ordered = sorted(buckets)
        times = [t for t, _ in ordered]
        cumulative = list(itertools.accumulate(n for _, n in ordered))
        # From zero at the first bucket to the end of the last one: a campaign done within
        # one minute is a visible rise, not a single point that draws nothing.
        xs = [times[0], *times, times[-1] + bucket]
        ys = [0, *cumulative, cumulative[-1]]
        # matplotlib converts datetimes through its units registry; the stub wants numbers.
        ax.step(xs, ys, where="post", color=_BLUE)  # type: ignore[arg-type]
        # Set the range: a date axis left to autoscale a few minutes spans years.
        margin = max(bucket, (xs[-1] - xs[0]) * 0.03)
        ax.set_xlim(xs[0] - margin, xs[-1] + margin)  # type: ignore[arg-type]
        locator = dates.AutoDateLocator(minticks=3, maxticks=7)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(dates.ConciseDateFormatter(locator))
        ax.set_xlabel("time (UTC)")
        if target:
            ax.axhline(target, color=_ORANGE, linestyle="--", linewidth=1, label="target")
            ax.legend(loc="lower right", frameon=False)
        ax.set_ylim(0, max(target, cumulative[-1]) * 1.05)
        ax.set_ylabel("annotations")

    empty = "" if buckets else "nothing submitted yet"
    return _chart(2.6, title, draw, empty=empty)


def annotator_scores(
    rows: Sequence[tuple[str, float, float, int]], *, title: str = "Scores per annotator"
) -> str:
    """Mean ± standard deviation of each annotator's scores (name, mean, std, n).

    A harsh or lenient annotator stands out against the dashed campaign mean. Means and
    deviations come from database aggregates, so this scales to any number of annotations.
    """

    def draw(ax: Axes) -> None:
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

    height = max(1.8, 0.3 * len(rows) + 1.0)
    if not rows:
        return _chart(height, title, draw, empty="no submitted scores yet")
    return _chart(height, title, draw, title_pad=24)  # room for the legend above the axes
