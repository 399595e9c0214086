"""Server-side charts of a search run (matplotlib to SVG, ``core.charts``).

Only numbers and fixed labels go into these figures (no topic names or texts), and the SVGs are
served as images, so nothing in them runs in the page.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core import charts

__all__ = ["calibration_chart_svg", "progress_chart_svg"]

ESTIMATE_COLOUR = "#3465a4"
TRUTH_COLOUR = "#4e9a06"
ORACLE_COLOUR = "#cc0000"


def _column(history: Sequence[dict], key: str) -> np.ndarray:
    return np.array([np.nan if row.get(key) is None else row[key] for row in history], dtype=float)


def progress_chart_svg(history: Sequence[dict], *, k: int, oracle: float | None) -> bytes:
    """Mean difficulty of the current top-k after each round (seed 000 Fig. 2/3).

    For synthetic runs the truth is known: the true mean of the recommended topics and the
    oracle (the true top-k's mean) are drawn too, so the gap shows what the search missed.
    """
    with charts.figure(8.6, 3.4) as figure:
        axes = figure.add_subplot()
        pulls = _column(history, "pulls")
        estimate = _column(history, "top_k_mean")
        truth = _column(history, "true_top_k_mean")
        if not history:
            charts.no_data(axes, "no round finished yet")
        else:
            marker = "o" if len(history) < 30 else None
            axes.plot(pulls, estimate, color=ESTIMATE_COLOUR, marker=marker, markersize=3,
                      label="estimated top-k mean")  # fmt: skip
            if not np.all(np.isnan(truth)):
                axes.plot(pulls, truth, color=TRUTH_COLOUR, marker=marker, markersize=3,
                          label="true mean of the chosen top-k")  # fmt: skip
            if oracle is not None:
                axes.axhline(oracle, color=ORACLE_COLOUR, linestyle="--",
                             label="oracle (true top-k)")  # fmt: skip
            axes.set_xlim(left=0)
            # Below the axes: inside, it hides the curves wherever they happen to run.
            axes.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3,
                        fontsize=9)  # fmt: skip
        axes.set_xlabel("pulls")
        axes.set_ylabel("difficulty (higher = harder)")
        axes.set_title(f"Mean difficulty of the top {k} topics", loc="left")
        return charts.svg(figure)


def calibration_chart_svg(x: Sequence[float], y: Sequence[float]) -> bytes:
    """The fitted monotone map automatic → human difficulty, over the identity."""
    with charts.figure(4.2, 3.2) as figure:
        axes = figure.add_subplot()
        if len(x) == 0:
            charts.no_data(axes, "no mapping yet")
        else:
            low, high = min(min(x), min(y)), max(max(x), max(y))
            axes.plot([low, high], [low, high], color="#8a8a8a", linestyle=":",
                      label="identity")  # fmt: skip
            # Drawn as applied: np.interp between the isotonic thresholds, flat beyond them;
            # repeated y values between thresholds give the familiar steps.
            axes.plot(x, y, color=ESTIMATE_COLOUR, marker=".", label="fitted map")
            axes.legend(frameon=False, loc="upper left", fontsize=9)
        axes.set_xlabel("automatic difficulty")
        axes.set_ylabel("calibrated difficulty")
        axes.set_title("Calibration (isotonic)", loc="left")
        return charts.svg(figure)
