"""Server-side charts of breaker runs (matplotlib to SVG, ``core.charts``): seed 001 Fig. 2, 3.

Left: the mean over chains of each chain's running minimum (what selecting the hardest step so
far gives); right: the mean quality at each step. One line per run, so a comparison draws its
methods side by side. Only numbers and method labels go into the figure.
"""

from __future__ import annotations

from collections.abc import Sequence

from core import charts

__all__ = ["curves_chart_svg", "diversity_difficulty_svg"]

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
COLOURS = ("#3465a4", "#cc0000", "#4e9a06", "#f57900", "#75507b", "#c4a000", "#555753", "#06989a")


def curves_chart_svg(series: Sequence[tuple[str, Sequence[dict]]]) -> bytes:
    """``series``: (label, curves rows ``{"step", "mean", "running_min"}``) per run."""
    with charts.figure(9.0, 3.4) as figure:
        left, right = figure.subplots(1, 2, sharey=True)
        drawn = [(label, rows) for label, rows in series if rows]
        if not drawn:
            for axes in (left, right):
                charts.no_data(axes, "no step scored yet")
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
        return charts.svg(figure)


def diversity_difficulty_svg(points: Sequence[tuple[str, float, float, float]]) -> bytes:
    """Fig. 3: each run's diversity (embedding, chrF) against its mean selected QE quality.

    ``points``: (method label, diversity embd, diversity chrF, mean selected quality). Lower
    quality is harder, so the trade-off shows as points running from bottom left to top right.
    """
    with charts.figure(9.0, 3.6) as figure:
        axes_pair = figure.subplots(1, 2, sharey=True)
        titles = ("Diversity (embd)", "Diversity (chrF)")
        for panel, (axes, title) in enumerate(zip(axes_pair, titles, strict=True)):
            axes.set_title(title, loc="left")
            axes.set_xlabel("diversity (higher = more diverse)")
            if not points:
                charts.no_data(axes, "no statistics computed yet")
            for i, (label, embd, chrf, quality) in enumerate(points):
                x = embd if panel == 0 else chrf
                # A legend, not labels beside the points: methods with close (or equal) scores
                # would print their names over each other. Distinct markers keep equal points
                # (Zeroshot and Zeroshot (history) often coincide) both visible, the hollow
                # ones drawn on top.
                colour = COLOURS[i % len(COLOURS)]
                axes.scatter([x], [quality], s=44, marker=MARKERS[i % len(MARKERS)],
                             facecolors="none" if i % 2 else colour, edgecolors=colour,
                             linewidths=1.5, label=label, zorder=3 + i % 2)  # fmt: skip
        if points:
            figure.legend(*axes_pair[0].get_legend_handles_labels(), frameon=False,
                          loc="lower center", ncol=min(4, len(points)), fontsize=9)  # fmt: skip
            figure.subplots_adjust(bottom=0.34 if len(points) > 4 else 0.28)
        axes_pair[0].set_ylabel("mean selected QE (lower = harder)")
        return charts.svg(figure)
