"""The set's difficulty distribution, automatic against human (matplotlib, SVG)."""

from __future__ import annotations

from collections.abc import Sequence

from core import charts


def difficulty_svg(automatic: Sequence[float], human: Sequence[float]) -> bytes:
    with charts.figure(6.0, 2.6) as figure:
        axes = figure.add_subplot()
        edges = list(range(0, 105, 5))
        if not automatic and not human:
            charts.no_data(axes, "no difficulty yet")
        for values, label in ((automatic, "automatic"), (human, "human (QC passed)")):
            if values:
                clipped = [min(100.0, max(0.0, v)) for v in values]
                axes.hist(clipped, bins=edges, histtype="step", linewidth=1.6,
                          label=f"{label} (n={len(values)})")  # fmt: skip
        if automatic or human:
            axes.legend(frameon=False, loc="upper left")
        axes.set_xlabel("difficulty (0 easy – 100 hard)")
        axes.set_ylabel("items")
        return charts.svg(figure)
