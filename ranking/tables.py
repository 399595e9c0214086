"""A ranking as a findings-paper table: CSV, LaTeX, Typst, plain text and JSON (no Django).

The tables follow the WMT findings papers' system tables (e.g. WMT22 findings, Table 4): the
rank range, the system, its mean and the number of scored segments, with a horizontal rule
between significance clusters. System names come from imported files and users, so every
format escapes them: LaTeX's ten special characters, Typst strings, spreadsheet formulas
(``formats.spreadsheet``). Control characters (a NUL, a line break in a name) never reach a
table as such.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from formats.spreadsheet import csv_lines
from ranking.results import RankedRow, ranked_rows

__all__ = [
    "FORMATS",
    "as_csv",
    "as_json",
    "as_latex",
    "as_text",
    "as_typst",
    "latex_escape",
    "render",
    "typst_string",
]

FORMATS = {
    "csv": ("text/csv; charset=utf-8", "csv"),
    "latex": ("application/x-tex; charset=utf-8", "tex"),
    "typst": ("text/plain; charset=utf-8", "typ"),
    "json": ("application/json; charset=utf-8", "json"),
    "text": ("text/plain; charset=utf-8", "txt"),
}
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\textasciicircum{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\textasciitilde{}",
}


def _printable(text: str) -> str:
    """Control characters (NUL, line breaks, ...) as spaces: a name stays on its row."""
    return _CONTROL.sub(" ", text)


def latex_escape(text: str) -> str:
    """``text`` as LaTeX prints it literally (every special character escaped)."""
    return "".join(_LATEX_SPECIAL.get(c, c) for c in _printable(text))


def typst_string(text: str) -> str:
    """``text`` as a Typst string literal (``"..."``), which markup never interprets."""
    escaped = _printable(text).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _decimals(rows: Sequence[RankedRow]) -> int:
    """Three decimals for z-scores and MQM-like small scales, one for 0–100 scores."""
    means = [abs(r.mean) for r in rows if r.mean is not None]
    return 1 if means and max(means) >= 10 else 3


def _number(value: float | None, decimals: int) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.{decimals}f}"


def _caption(result: dict[str, Any]) -> str:
    settings = result["settings"]
    test = settings.get("test", "")
    alpha = settings.get("alpha", 0.05)
    holm = ", Holm-corrected" if settings.get("holm") else ""
    return (
        f"{result['input']['description']}: systems ranked by mean score; clusters by "
        f"one-sided {test} tests ({settings.get('pairs', 'all')} pairs{holm}) at p < {alpha}"
    )


def _ruled(rows: Sequence[RankedRow], lines: Iterable[str], rule: str) -> list[str]:
    """The rows' lines (one each) with ``rule`` after the last row of each cluster."""
    out = []
    for row, line in zip(rows, lines, strict=True):
        out.append(line)
        if row.ends_cluster:
            out.append(rule)
    return out


def as_csv(result: dict[str, Any]) -> Iterator[str]:
    """One row per system, rank order; cells guarded against spreadsheet formulas."""
    header = [
        "position", "rank_range", "best_rank", "worst_rank", "cluster", "system", "mean",
        "ci_low", "ci_high", "n_segments", "wins",
    ]  # fmt: skip
    rows = (
        [r.position, r.rank_range, r.best_rank, r.worst_rank, r.cluster, r.system,
         _raw(r.mean), _raw(r.low), _raw(r.high), r.n, r.wins]
        for r in ranked_rows(result)
    )  # fmt: skip
    return csv_lines(header, rows)


def _raw(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def as_latex(result: dict[str, Any]) -> str:
    """A booktabs ``tabular`` with ``\\midrule`` between clusters (needs ``booktabs``)."""
    rows = ranked_rows(result)
    decimals = _decimals(rows)
    lines = [
        f"% {latex_escape(_caption(result))}",
        "% needs \\usepackage{booktabs}",
        "\\begin{tabular}{rlrr}",
        "\\toprule",
        "Rank & System & Mean & $n$ \\\\",
        "\\midrule",
    ]
    lines += _ruled(rows, (_latex_row(row, decimals) for row in rows), "\\midrule")
    lines += ["\\bottomrule", "\\end{tabular}", ""]
    return "\n".join(lines)


def _latex_row(row: RankedRow, decimals: int) -> str:
    rank = row.rank_range.replace("–", "--")
    mean = _number(row.mean, decimals).replace("-", "$-$", 1)  # a minus, not a hyphen
    return f"{rank} & {latex_escape(row.system)} & {mean} & {row.n} \\\\"


def as_typst(result: dict[str, Any]) -> str:
    """A Typst ``table`` with a horizontal line between clusters."""
    rows = ranked_rows(result)
    decimals = _decimals(rows)
    rule = "  table.hline(stroke: 0.5pt),"
    lines = [
        f"// {_printable(_caption(result))}",
        "#table(",
        "  columns: 4,",
        "  align: (right, left, right, right),",
        "  stroke: none,",
        "  table.hline(),",
        "  table.header([*Rank*], [*System*], [*Mean*], [*$n$*]),",
        rule,
    ]
    lines += _ruled(rows, (_typst_row(row, decimals) for row in rows), rule)
    lines += ["  table.hline(),", ")", ""]
    return "\n".join(lines)


def _typst_row(row: RankedRow, decimals: int) -> str:
    mean = _number(row.mean, decimals).replace("-", "\u2212", 1)  # a minus, not a hyphen
    cells = [typst_string(row.rank_range), typst_string(row.system), typst_string(mean),
             typst_string(str(row.n))]  # fmt: skip
    return "  " + ", ".join(f"[#{cell}]" for cell in cells) + ","


def as_text(result: dict[str, Any]) -> str:
    """Aligned columns for a terminal, a dashed rule between clusters."""
    rows = ranked_rows(result)
    decimals = _decimals(rows)
    confidence = round(100 * result.get("confidence", 0.95))
    header = ["Rank", "System", "Mean", f"{confidence}% CI", "n", "Wins"]
    body = [
        [r.rank_range, _printable(r.system), _number(r.mean, decimals),
         f"[{_number(r.low, decimals)}, {_number(r.high, decimals)}]", str(r.n), str(r.wins)]
        for r in rows
    ]  # fmt: skip
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 1 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    rule = "-" * (sum(widths) + 2 * (len(widths) - 1))
    out = [_printable(_caption(result)), "", line(header), rule]
    out += _ruled(rows, (line(cells) for cells in body), rule)
    out += [f"note: {_printable(note)}" for note in result["input"].get("notes", [])]
    return "\n".join(out) + "\n"


def as_json(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def render(result: dict[str, Any], fmt: str) -> str:
    """The result in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "csv":
        return "".join(as_csv(result))
    if fmt == "latex":
        return as_latex(result)
    if fmt == "typst":
        return as_typst(result)
    if fmt == "json":
        return as_json(result)
    if fmt == "text":
        return as_text(result)
    raise ValueError(f"format must be one of {', '.join(FORMATS)}")
