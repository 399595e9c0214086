"""CSV and TSV cells that a spreadsheet cannot run as formulas, nor split into new rows.

Texts in our CSV/TSV exports come from users, corpora and model answers. A cell starting with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by Excel, LibreOffice and Google
Sheets as a formula (CSV injection); OWASP's advice is to prefix such cells with ``'``, which
spreadsheets show as text. Numbers written as text (``-0.25``, ``+3``) are left alone: a
spreadsheet reads them as numbers, not formulas.

A line break inside a cell is the other way in: Python's ``csv`` quotes a cell only for the
characters of its own line terminator, so with ``"\\n"`` endings a bare ``\\r`` went out
unquoted and ``fine\\r@SUM(...)`` became a new row starting with a formula. Every CSV here is
written with ``\\r\\n`` as the writer's terminator, so any cell holding ``\\r`` or ``\\n`` is
quoted, and each line's ending is then swapped for the one the format asks for. TSV (Google's
MQM files) has no quoting: tabs and line breaks become spaces.

Every CSV and TSV export goes through this module. Byte-exact formats (the DTAiLS release shape)
skip the formula prefix, which would change their data, but not the quoting of line breaks.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["csv_lines", "csv_text", "guard_cell", "guard_row", "tsv_line"]

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# The writer's own terminator holds both characters, so that any cell with either is quoted.
_WRITER_ENDING = "\r\n"


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
    header: Iterable[Any],
    rows: Iterable[Iterable[Any]],
    lineterminator: str = "\r\n",
    guard: bool = True,
) -> Iterator[str]:
    """The header and every row as CSV lines, cells guarded and line breaks inside cells
    quoted; lazy, for streamed downloads. ``guard=False`` only for byte-exact formats."""
    writer = csv.writer(_Line(), lineterminator=_WRITER_ENDING)
    cells = guard_row if guard else list

    def line(values: Iterable[Any]) -> str:
        written: str = writer.writerow(cells(values))
        return written.removesuffix(_WRITER_ENDING) + lineterminator

    yield line(header)
    for row in rows:
        yield line(row)


def csv_text(
    header: Iterable[Any],
    rows: Iterable[Iterable[Any]],
    lineterminator: str = "\r\n",
    guard: bool = True,
) -> str:
    """The header and every row as one CSV text, as :func:`csv_lines` writes them (``None``
    becomes empty)."""
    buffer = io.StringIO()
    buffer.writelines(csv_lines(header, rows, lineterminator, guard=guard))
    return buffer.getvalue()


def tsv_line(values: Iterable[Any]) -> str:
    """One unquoted TSV line: cells guarded, tabs and line breaks inside them as spaces."""
    cells = ("" if value is None else str(guard_cell(value)) for value in values)
    return "\t".join(_one_line(cell) for cell in cells) + "\n"


def _one_line(text: str) -> str:
    return text.replace("\t", " ").replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
