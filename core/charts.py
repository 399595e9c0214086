"""The one matplotlib set-up of every server-side chart: a figure under the house style, drawn to
SVG (ADR 0047). No Django; each app's ``charts.py`` draws its own figures with it.

* ``matplotlib.figure.Figure``, never pyplot: pyplot keeps global state that is not safe across
  the threads of a web server, and a bare ``Figure`` needs no GUI backend (nor ``Agg``).
* matplotlib is imported when a chart is drawn, not when a module is imported: a worker or a
  page that draws nothing does not pay for it.
* Text stays text in the SVG (``svg.fonttype`` ``none``): small files, crisp labels, and the
  browser draws CJK, Arabic, ... with its own fonts, so matplotlib's missing-glyph warnings (it
  measures with DejaVu Sans) do not matter. The SVG carries no date, so the same figure gives
  the same bytes wherever ``svg.hashsalt`` is fixed.
* Only numbers and labels go into a figure, and the SVGs are served as images, so nothing in
  them runs in the page.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

__all__ = ["STYLE", "figure", "no_data", "svg"]

STYLE: dict[RcKeyType, Any] = {
    "svg.fonttype": "none",
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
"""The house style; a module passes its own keys to :func:`figure` on top of it."""


@contextmanager
def figure(
    width: float, height: float, style: Mapping[RcKeyType, Any] | None = None
) -> Iterator[Figure]:
    """A ``width`` × ``height`` inch figure, drawn under :data:`STYLE` and ``style``. Call
    :func:`svg` inside the ``with`` block: some settings (the SVG ones) are read when saving."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context({**STYLE, **(style or {})}):
        yield Figure(figsize=(width, height))


def svg(fig: Figure) -> bytes:
    """The figure as an SVG document, cropped to what is drawn."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buffer.getvalue()


def no_data(axes: Axes, message: str, **text: Any) -> None:
    """``message`` in the middle of empty axes ("no scores yet")."""
    axes.text(0.5, 0.5, message, ha="center", va="center", transform=axes.transAxes, **text)
