"""Server-side charts of breaker runs (matplotlib, Agg, SVG): seed 001 Fig. 2.

Left: the mean over chains of each chain's running minimum (what selecting the hardest step so
far gives); right: the mean quality at each step. One line per run, so a comparison draws its
methods side by side. Only numbers and method labels go into the figure.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib import rc_context
from matplotlib.figure import Figure

from difficulty.plots import _RC, _svg

__all__ = ["curves_chart_svg"]

COLOURS = ("#3465a4", "#cc0000", "#4e9a06", "#f57900", "#75507b", "#c4a000", "#555753", "#06989a")


def curves_chart_svg(series: Sequence[tuple[str, Sequence[dict]]]) -> bytes:
    """``series``: (label, curves rows ``{"step", "mean", "running_min"}``) per run."""
    with rc_context(_RC):
        figure = Figure(figsize=(9.0, 3.4))
        left, right = figure.subplots(1, 2, sharey=True)
        drawn = [(label, rows) for label, rows in series if rows]
        if not drawn:
            for axes in (left, right):
                axes.text(0.5, 0.5, "no step scored yet", ha="center", va="center",
                          transform=axes.transAxes)  # fmt: skip
        for i, (label, rows) in enumerate(drawn):
            steps = [row["step"] for row in rows]
            colour = COLOURS[i % len(COLOURS)]
            if len(rows) == 1:
                # One text per item (Seeds, Zeroshot): a level to compare the curves against.
                for axes in (left, right):
                    axes.axhline(rows[0]["mean"], color=colour, linestyle="--", linewidth=1.2,
                                 label=label)  # fmt: skip
                continue
            marker = "o" if len(rows) < 30 else None
            left.plot(steps, [row["running_min"] for row in rows], color=colour, marker=marker,
                      markersize=3, label=label)  # fmt: skip
            right.plot(steps, [row["mean"] for row in rows], color=colour, marker=marker,
                       markersize=3, label=label)  # fmt: skip
        left.set_title("Mean of the running minimum", loc="left")
        right.set_title("Mean quality per step", loc="left")
        left.set_ylabel("QE quality (lower = harder)")
        for axes in (left, right):
            axes.set_xlabel("step")
        if drawn:
            figure.legend(*left.get_legend_handles_labels(), frameon=False, loc="lower center",
                          ncol=min(4, len(drawn)), fontsize=9)  # fmt: skip
            figure.subplots_adjust(bottom=0.32 if len(drawn) > 4 else 0.26)
        return _svg(figure)
