"""CSV cells that a spreadsheet cannot run as formulas.

Texts in our CSV exports come from users, corpora and model answers. A cell starting with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by Excel, LibreOffice and Google
Sheets as a formula (CSV injection); OWASP's advice is to prefix such cells with ``'``, which
spreadsheets show as text. Numbers written as text (``-0.25``, ``+3``) are left alone: a
spreadsheet reads them as numbers, not formulas. Byte-exact formats (the DTAiLS release shape)
do not use this: they must stay what their home tool reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["guard_cell", "guard_row"]

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def guard_cell(value: Any) -> Any:
    """The cell as is, or prefixed with ``'`` when a spreadsheet would run it as a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS) and not _is_number(value):
        return "'" + value
    return value


def guard_row(values: Iterable[Any]) -> list[Any]:
    """Every cell of a row through :func:`guard_cell`."""
    return [guard_cell(value) for value in values]
