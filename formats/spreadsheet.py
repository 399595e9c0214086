"""CSV cells that a spreadsheet cannot run as formulas.

Texts in our CSV exports come from users, corpora and model answers. A cell starting with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by Excel, LibreOffice and Google
Sheets as a formula (CSV injection); OWASP's advice is to prefix such cells with ``'``, which
spreadsheets show as text. Numbers written as text (``-0.25``, ``+3``) are left alone: a
spreadsheet reads them as numbers, not formulas. Byte-exact formats (the DTAiLS release shape)
do not use this: they must stay what their home tool reads.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["csv_lines", "csv_text", "guard_cell", "guard_row"]

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


class _Line:
    """A file whose ``write`` hands the line back: csv.writer then yields lines one by one."""

    def write(self, value: str) -> str:
        return value


def csv_lines(
    header: list[str] | tuple[str, ...],
    rows: Iterable[Iterable[Any]],
    lineterminator: str = "\r\n",
) -> Iterator[str]:
    """The header and every row as CSV lines, cells guarded; lazy, for streamed downloads."""
    writer = csv.writer(_Line(), lineterminator=lineterminator)
    yield writer.writerow(header)
    for row in rows:
        yield writer.writerow(guard_row(row))


def csv_text(
    header: list[str] | tuple[str, ...], rows: Iterable[Iterable[Any]], lineterminator: str = "\r\n"
) -> str:
    """The header and every row as one CSV text, cells guarded (``None`` becomes empty)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=lineterminator)
    writer.writerow(header)
    writer.writerows(guard_row(row) for row in rows)
    return buffer.getvalue()
