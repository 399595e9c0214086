"""The pure DTAiLS reader/writer: released shape, round trips and hostile files."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lexical.dtails import format as fmt
from lexical.dtails.format import DtailsError, DtailsRow, WordsEntry

EXAMPLES = Path(__file__).resolve().parents[3] / "lexical" / "dtails" / "examples"
HEADER = b"concept,source language text,target language text,variations,label\n"


def canonical() -> bytes:
    return (EXAMPLES / "expert_dataset.csv").read_bytes()


def one_row(row: bytes) -> bytes:
    return HEADER + row + b"\n"


def errors_of(data: bytes, reader=fmt.read_csv) -> list[tuple[int, str]]:
    with pytest.raises(DtailsError) as caught:
        reader(data)
    return caught.value.errors


def test_released_file_round_trips_byte_for_byte():
    data = canonical()
    rows = fmt.read_csv(data)
    assert fmt.write_csv(rows) == data
    assert rows[0] == DtailsRow(
        "my", "Oh, by the way, I make yellowcake in my garage.",
        "O, e tamén produzo óxido de uranio no meu garaxe.", ("meu/meus", "miña/miñas"),
        "meu/meus", line=2,
    )  # fmt: skip
    assert rows[1].source.endswith('cookbook."') and rows[1].line == 3
    assert rows[1].surface_forms() == ["meu", "meus"]


def test_released_quoting_corner_cases_round_trip():
    # Rows as the released en-gl file writes them: a cell that starts with a quote, one that
    # ends with one, and quotes inside a quoted cell.
    data = (
        HEADER
        + (
            'mean,"And there was silence in the class, and finally one woman stood up, she said '
            '""Khrew,"" which means ""teacher.""",""". E a sala quedárase en silencio, e dixo '
            '""Khrew"" que significa ""mestre"".","[\'dicir\', \'significa\']",significa\n'
            'child,"(Laughter) ""Come to visit the children?","(Risos) ""Veu visita-los seus '
            "fillos?\",\"['fillo/fillos', 'neno/nenos']\",fillo/fillos\n"
        ).encode()
    )
    rows = fmt.read_csv(data)
    assert rows[0].target.startswith('". E a sala') and rows[0].source.endswith('"teacher."')
    assert fmt.write_csv(rows) == data


def test_writer_uses_pandas_shape():
    row = DtailsRow("it's", 'He said "hi", then left', "x", ("l'eau", "b"), "b")
    assert fmt.write_csv([row]) == HEADER + (
        b'it\'s,"He said ""hi"", then left",x,"[""l\'eau"", \'b\']",b\n'
    )
    assert fmt.read_csv(fmt.write_csv([row]))[0].variations == ("l'eau", "b")


def test_bom_crlf_and_empty_lines_are_accepted():
    data = canonical()
    messy = b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n").replace(b"\r\nmy,My", b"\r\n\r\nmy,My")
    rows = fmt.read_csv(messy)
    assert [r.label for r in rows] == [r.label for r in fmt.read_csv(data)]
    assert rows[3].line == 6  # the empty line counts
    assert fmt.write_csv(rows) == data


def test_multiline_cells_keep_the_starting_line():
    data = HEADER + b"a,\"one\ntwo\",t,\"['x', 'y']\",x\nb,s,t,\"['x', 'y']\",z\n"
    assert errors_of(data) == [(4, "label 'z' is not one of the variations ['x', 'y']")]


def test_bad_utf8_names_byte_and_line():
    data = one_row(b"a,s,t,\"['x', 'y']\",x") + b"b,s\xff,t,\"['x', 'y']\",x\n"
    ((line, message),) = errors_of(data)
    assert line == 3 and "byte 0xff" in message


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (b"concept,source language text,variations,label", "missing column(s): 'target language"),
        (HEADER.strip() + b",extra", "unexpected column(s): 'extra'"),
        (b"concept,source language text,target language text,label,variations",
         "columns are out of order"),
        (b"concept,concept,source language text,target language text,variations,label",
         "repeated column(s): 'concept'"),
    ],
)  # fmt: skip
def test_wrong_header_says_which_columns(header, expected):
    ((line, message),) = errors_of(header + b"\n")
    assert line == 1 and expected in message


def test_empty_and_header_only_files():
    assert "empty" in errors_of(b"")[0][1]
    assert "no rows" in errors_of(HEADER)[0][1]


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        (b"\"['x']\"", "at least 2 variations"),
        (b"\"['x', ['y']]\"", "flat list of strings"),
        (b"\"['x', 1]\"", "flat list of strings"),
        (b"\"['x', 'x']\"", "more than once"),
        (b"\"['x', '']\"", "empty variation"),
        (b"\"['x', 'a//b']\"", "empty surface form"),
        (b"\"['x', ' y']\"", "leading or trailing spaces"),
        (b"\"__import__('os').system('echo pwned')\"", "must be a list"),
        (b"\"[__import__('os')]\"", "not a Python list"),
        (b"\"{'x', 'y'}\"", "must be a list"),
        (b"x;y", "must be a list"),
        (b'"[' + b"'a', " * 3000 + b"'b']\"", "longer than 10000"),
        (b'"' + b"[" * 4000 + b"]" * 4000 + b'"', "not a Python list"),
    ],
)
def test_hostile_variations_are_refused_with_the_line(cell, expected):
    data = one_row(b"a,s,t," + cell + b",x")
    ((line, message),) = errors_of(data)
    assert line == 2 and expected in message


def test_label_missing_cells_and_duplicates():
    data = (
        HEADER
        + b"a,s,t,\"['x', 'y']\",z\n"
        + b"a,s,t,\"['x', 'y']\"\n"
        + b"a,s,t,\"['x', 'y']\",x\n"
        + b"a,s,t,\"['x', 'y']\",y\n"
        + b",s,t,\"['x', 'y']\",x\n"
    )
    assert errors_of(data) == [
        (2, "label 'z' is not one of the variations ['x', 'y']"),
        (3, "expected 5 cells, got 4"),
        (
            5,
            "labels the sentence pair of line 4 'y' where that line says 'x'; a sentence pair "
            "has one attested variation: remove or correct one of the two rows",
        ),
        (6, "concept is empty"),
    ]


def test_a_repeated_row_is_kept_once_and_reported():
    # The released af and gl expert files repeat a row (gl: "mean", "At the beginning, ...").
    data = HEADER + b"a,s,t,\"['x', 'y']\",x\n" * 2 + b"a,s2,t2,\"['x', 'y']\",y\n"
    report = fmt.read_csv_report(data)
    assert [r.line for r in report.rows] == [2, 4]
    assert report.repeats == [(3, 2)]


def test_repeated_rows_can_be_kept_for_an_exact_round_trip():
    data = HEADER + b"a,s,t,\"['x', 'y']\",x\n" * 2
    report = fmt.read_csv_report(data, keep_duplicates=True)
    assert [r.line for r in report.rows] == [2, 3]
    assert report.repeats == [(3, 2)]
    assert fmt.write_csv(report.rows) == data


def test_a_sentence_pair_labelled_twice_differently_is_refused_even_when_keeping_repeats():
    data = HEADER + b"a,s,t,\"['x', 'y']\",x\n" + b"a,s,t,\"['x', 'y']\",y\n"
    with pytest.raises(DtailsError) as caught:
        fmt.read_csv(data, keep_duplicates=True)
    assert [line for line, _ in caught.value.errors] == [3]


def test_errors_are_capped_and_counted():
    data = HEADER + b"a,s,t,x,x\n" * 60
    with pytest.raises(DtailsError) as caught:
        fmt.read_csv(data)
    assert len(caught.value.errors) == fmt.MAX_ERRORS and caught.value.more == 10
    assert "and 10 more error(s)" in str(caught.value)


def test_nul_byte_is_a_csv_error_with_line():
    ((line, message),) = errors_of(one_row(b"a,s\x00,t,\"['x', 'y']\",x"))
    assert line == 2 and "NUL byte" in message


# --- words files -----------------------------------------------------------------------------


def test_words_file_round_trips():
    data = (EXAMPLES / "gl.words").read_bytes()
    entries = fmt.read_words(data)
    assert entries[0] == WordsEntry("my", "PRON", ("meu/meus", "miña/miñas"), line=1)
    assert fmt.write_words(entries) == data


def test_words_file_errors_name_the_line():
    data = b"my,PRON,a;b\n\nbad line\nx,,a;b\ny,NOUN,a;;b\nmy,PRON,c;d\nz,NOUN,a;a\n"
    assert errors_of(data, fmt.read_words) == [
        (3, "expected concept,POS,var1;var2;... (two commas)"),
        (4, "POS '' must be one tag of at most 16 characters"),
        (5, "an empty variation"),
        (6, "my,PRON is already on line 1"),
        (7, "variation(s) 'a' listed twice"),
    ]
    assert "byte 0xe9" in errors_of(b"a,N,x\nb,N,caf\xe9\n", fmt.read_words)[0][1]


# --- properties ------------------------------------------------------------------------------

_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=40,
).filter(lambda s: s.strip() and s == s.strip() and "\r" not in s)
_form = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Zs", "Cc", "Zl", "Zp"), blacklist_characters="/"
    ),
    min_size=1,
    max_size=8,
)
_variation = st.lists(_form, min_size=1, max_size=3).map("/".join)


@st.composite
def _rows(draw):
    variations = draw(st.lists(_variation, min_size=2, max_size=4, unique=True))
    return DtailsRow(
        draw(_text), draw(_text), draw(_text), tuple(variations), draw(st.sampled_from(variations))
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(_rows(), min_size=1, max_size=5, unique_by=lambda r: (r.concept, r.source)))
def test_any_written_file_reads_back_and_rewrites_identically(rows):
    data = fmt.write_csv(rows)
    read = fmt.read_csv(data)
    assert [(r.concept, r.source, r.target, r.variations, r.label) for r in read] == [
        (r.concept, r.source, r.target, r.variations, r.label) for r in rows
    ]
    assert fmt.write_csv(read) == data


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash_the_readers(data):
    for reader in (fmt.read_csv, fmt.read_words):
        with contextlib.suppress(DtailsError):
            reader(HEADER + data)
