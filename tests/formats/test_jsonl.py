"""The one JSONL reader every importer shares: numbered lines, every problem reported."""

import io

import pytest

from formats.jsonl import JsonDocumentError, LineProblem, read_json_document, read_jsonl


def test_lines_are_numbered_from_one_and_blank_lines_count_but_are_skipped():
    text = '{"a": 1}\n\n   \n[2, 3]\n"x"\n'

    assert list(read_jsonl(text)) == [(1, {"a": 1}), (4, [2, 3]), (5, "x")]


def test_str_bytes_files_and_line_iterables_read_alike():
    text = '{"a": 1}\r\n{"b": 2}\n'
    expected = [(1, {"a": 1}), (2, {"b": 2})]

    assert list(read_jsonl(text)) == expected
    assert list(read_jsonl(text.encode())) == expected
    assert list(read_jsonl(io.BytesIO(text.encode()))) == expected
    assert list(read_jsonl(io.StringIO(text))) == expected
    assert list(read_jsonl([b'{"a": 1}\n', b'{"b": 2}\n'])) == expected


def test_a_byte_order_mark_is_tolerated_on_the_first_line_only():
    assert list(read_jsonl('\ufeff{"a": 1}\n'.encode())) == [(1, {"a": 1})]
    ((_, second),) = [row for row in read_jsonl('{"a": 1}\n\ufeff{"b": 2}\n') if row[0] == 2]
    assert isinstance(second, LineProblem)


def test_bad_lines_are_yielded_as_problems_and_reading_goes_on():
    lines = [b'{"a": 1}\n', b"\xff\xfe broken\n", b'{"a": \n', b"[" * 100_000 + b"\n", b"7\n"]

    rows = list(read_jsonl(lines))

    assert [number for number, _ in rows] == [1, 2, 3, 4, 5]
    assert rows[1][1] == LineProblem("not valid UTF-8")
    assert rows[2][1].reason.startswith("not valid JSON (Expecting value at column")
    assert rows[3][1] == LineProblem("not valid JSON (nested more than 64 levels deep)")
    assert rows[4] == (5, 7)


def test_a_json_document_is_read_with_or_without_a_byte_order_mark():
    assert read_json_document(b'{"a": [1]}') == {"a": [1]}
    assert read_json_document(b'\xef\xbb\xbf{"a": [1]}') == {"a": [1]}


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\xff{}", "not valid UTF-8"),
        (b'{\n  "a": }', "not valid JSON (Expecting value at line 2, column 8)"),
        (b"[" * 100_000, "not valid JSON (nested more than 64 levels deep)"),
        (b'{"a": 1, "a": 2}', "not valid JSON (duplicate key 'a')"),
        (b'{"a": NaN}', "not valid JSON (NaN at $.a is not a JSON number)"),
    ],
)
def test_a_bad_json_document_is_one_line_that_says_where(data, reason):
    with pytest.raises(JsonDocumentError) as info:
        read_json_document(data)
    assert str(info.value) == reason
