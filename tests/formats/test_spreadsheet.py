"""CSV cells a spreadsheet would run as formulas get a leading quote; numbers and plain text
stay as they are."""

from __future__ import annotations

import csv
import io

import pytest

from formats.spreadsheet import csv_lines, csv_text, guard_cell, guard_row, tsv_line


@pytest.mark.parametrize(
    "cell",
    ["=1+1", "+SUM(A1:A3)", "-2+3", "@cmd", "\tx", "\rx", '=HYPERLINK("http://x")', "-", "+"],
)
def test_formula_starts_are_quoted(cell):
    assert guard_cell(cell) == "'" + cell


@pytest.mark.parametrize("cell", ["-0.25", "+3", "-1e-3", "plain", "a=b", "", "'=already"])
def test_numbers_and_plain_text_are_kept(cell):
    assert guard_cell(cell) == cell


def test_non_strings_pass_through_and_rows_are_guarded_cell_by_cell():
    assert guard_cell(None) is None and guard_cell(-3) == -3 and guard_cell(1.5) == 1.5
    assert guard_row(["=x", 2, "ok", "-y"]) == ["'=x", 2, "ok", "'-y"]


def test_csv_text_guards_cells_and_writes_none_as_empty() -> None:
    text = csv_text(["a", "b"], [["=SUM(A1)", None], [-0.5, "x,y"]], lineterminator="\n")
    assert text == 'a,b\n\'=SUM(A1),\n-0.5,"x,y"\n'


def test_csv_lines_yields_one_line_at_a_time_lazily() -> None:
    def rows():
        yield ["@cmd", 1]
        raise AssertionError("read past the first row")

    lines = csv_lines(("h1", "h2"), rows())
    assert next(lines) == "h1,h2\r\n"
    assert next(lines) == "'@cmd,1\r\n"


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_every_line_break_in_a_cell_is_quoted_whatever_the_line_ending(ending) -> None:
    cells = ["fine\r@SUM(1+1)", "a\nb", "c\r\nd", "plain"]

    text = csv_text(["h\r1", "h2", "h3", "h4"], [cells], lineterminator=ending)

    assert text == (f'"h\r1",h2,h3,h4{ending}"fine\r@SUM(1+1)","a\nb","c\r\nd",plain{ending}')
    assert list(csv.reader(io.StringIO(text, newline=""))) == [["h\r1", "h2", "h3", "h4"], cells]


def test_unguarded_csv_keeps_formulas_but_still_quotes_line_breaks() -> None:
    assert csv_text(["h"], [["=x\ry"]], lineterminator="\n", guard=False) == 'h\n"=x\ry"\n'


def test_tsv_lines_are_guarded_with_tabs_and_line_breaks_as_spaces() -> None:
    line = tsv_line(["@cmd", "fine\r@SUM(1)", "a\tb\r\nc", None, 3, "-0.5"])

    assert line == "'@cmd\tfine @SUM(1)\ta b c\t\t3\t-0.5\n"
