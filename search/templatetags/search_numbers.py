"""Number formatting for search pages.

Difficulties are on a 0–100 scale for crowds, judges and synthetic worlds, but heuristics give
raw quantities (minus a mean word frequency is about -0.006): one decimal would show them all as
0.0, so small magnitudes keep three significant digits.
"""

from __future__ import annotations

import math

from django import template

register = template.Library()


@register.filter
def difficulty(value) -> str:
    """``37.2``, ``4.3``, ``-0.00612``; ``–`` for missing values."""
    if value is None or value == "":
        return "–"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "–"
    if not math.isfinite(number):
        return "–"
    magnitude = abs(number)
    if magnitude >= 1 or number == 0:
        return f"{number:.1f}"
    return f"{number:.3g}"
