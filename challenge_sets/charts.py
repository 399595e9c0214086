"""The set's difficulty distribution, automatic against human (matplotlib, SVG)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

_RC: dict[RcKeyType, Any] = {"svg.fonttype": "none", "font.size": 10, "axes.spines.top": False,
       "axes.spines.right": False}  # fmt: skip


def difficulty_svg(automatic: Sequence[float], human: Sequence[float]) -> bytes:
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context(_RC):
        figure = Figure(figsize=(6.0, 2.6))
        axes = figure.add_subplot()
        edges = list(range(0, 105, 5))
        if not automatic and not human:
            axes.text(0.5, 0.5, "no difficulty yet", ha="center", va="center",
                      transform=axes.transAxes)  # fmt: skip
        for values, label in ((automatic, "automatic"), (human, "human (QC passed)")):
            if values:
                clipped = [min(100.0, max(0.0, v)) for v in values]
                axes.hist(clipped, bins=edges, histtype="step", linewidth=1.6,
                          label=f"{label} (n={len(values)})")  # fmt: skip
        if automatic or human:
            axes.legend(frameon=False, loc="upper left")
        axes.set_xlabel("difficulty (0 easy – 100 hard)")
        axes.set_ylabel("items")
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", bbox_inches="tight")
        return buffer.getvalue()
