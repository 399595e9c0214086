"""Reading parallel corpora line by line, as OPUS/Moses, TSV or JSONL (seed 004 §2.1).

Pure Python (no Django): each reader takes binary streams and yields ``(line, src, tgt)`` with
1-based line numbers, reading one line at a time so memory stays bounded whatever the size of
the file. Anything wrong raises :class:`PairFormatError` naming the line; the import service
turns that into "nothing was written".

Formats:

* ``moses`` — two aligned plain-text files, line *i* of one is the translation of line *i* of
  the other (how OPUS distributes its Moses downloads);
* ``tsv`` — one pair per line, ``src<TAB>tgt``;
* ``jsonl`` — one object per line with string keys ``"src"`` and ``"tgt"`` (other keys are
  ignored; a duplicated key is refused).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO, Any

from formats import strict_json

__all__ = [
    "FORMATS",
    "MAX_LINE_BYTES",
    "PairFormatError",
    "jsonl_pairs",
    "moses_pairs",
    "read_lines",
    "tsv_pairs",
]

FORMATS = ("moses", "tsv", "jsonl")
# A sentence pair is a few hundred bytes; a line this long is a broken file (or a document
# pasted as one line), and reading at most this much per line is what bounds memory.
MAX_LINE_BYTES = 64 * 1024
# Control characters no sentence contains and PostgreSQL cannot store (NUL) or that break the
# one-pair-per-line formats on export; tab and the line ends are handled by the readers.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")

Pair = tuple[int, str, str]


class PairFormatError(ValueError):
    """The input cannot be read; ``line`` (1-based, 0 when no line applies) says where."""

    def __init__(self, line: int, message: str, *, file: str = ""):
        self.line, self.file, self.message = line, file, message
        where = f"{file}: " if file else ""
        where += f"line {line}: " if line else ""
        super().__init__(f"{where}{message}")


def read_lines(stream: IO[bytes], *, name: str = "") -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of a binary stream: strict UTF-8 (a byte-order mark on the first
    line is dropped), the line end removed, at most :data:`MAX_LINE_BYTES` per line."""
    number = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise PairFormatError(
                number, f"longer than {MAX_LINE_BYTES // 1024} KiB; is this a corpus?", file=name
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PairFormatError(
                number, f"not valid UTF-8 (byte {exc.start + 1} of the line)", file=name
            ) from None
        if number == 1:
            text = text.removeprefix("\ufeff")
        yield number, text.removesuffix("\n").removesuffix("\r")


def _side(text: str, line: int, side: str, file: str = "") -> str:
    if not text.strip():
        raise PairFormatError(line, f"the {side} side is empty", file=file)
    if _CONTROL.search(text):
        raise PairFormatError(line, f"the {side} side contains a control character", file=file)
    return text


def moses_pairs(
    src: IO[bytes], tgt: IO[bytes], *, src_name: str = "source", tgt_name: str = "target"
) -> Iterator[Pair]:
    """Pairs of two aligned files; files of different lengths are refused, naming the one that
    ends first (the pairs before it were aligned, so the error is found only at its end)."""
    tgt_lines = read_lines(tgt, name=tgt_name)
    number = 0
    for number, src_text in read_lines(src, name=src_name):
        found = next(tgt_lines, None)
        if found is None:
            raise PairFormatError(
                number,
                f"misaligned files: {tgt_name} ends after line {number - 1} but {src_name} goes on",
            )
        _line, tgt_text = found
        yield (
            number,
            _side(src_text, number, "source", src_name),
            _side(tgt_text, number, "target", tgt_name),
        )
    if next(tgt_lines, None) is not None:
        raise PairFormatError(
            number + 1,
            f"misaligned files: {src_name} ends after line {number} but {tgt_name} goes on",
        )


def tsv_pairs(stream: IO[bytes], *, name: str = "") -> Iterator[Pair]:
    """Pairs of ``src<TAB>tgt`` lines; any other number of columns is refused."""
    for number, text in read_lines(stream, name=name):
        columns = text.split("\t")
        if len(columns) != 2:
            raise PairFormatError(
                number,
                f"expected 2 tab-separated columns (source, target), found {len(columns)}",
                file=name,
            )
        yield (
            number,
            _side(columns[0], number, "source", name),
            _side(columns[1], number, "target", name),
        )


def _text_field(record: dict[str, Any], key: str, line: int, name: str) -> str:
    if key not in record:
        raise PairFormatError(line, f'the object has no "{key}" key', file=name)
    value = record[key]
    if not isinstance(value, str):
        raise PairFormatError(line, f'"{key}" must be a string', file=name)
    return _side(value, line, "source" if key == "src" else "target", name)


def jsonl_pairs(stream: IO[bytes], *, name: str = "") -> Iterator[Pair]:
    """Pairs of ``{"src": ..., "tgt": ...}`` lines, parsed strictly (formats.strict_json)."""
    for number, text in read_lines(stream, name=name):
        if not text.strip():
            raise PairFormatError(number, "empty line (expected a JSON object)", file=name)
        try:
            record = strict_json.loads(text)
        except strict_json.JSONInputError as exc:
            raise PairFormatError(number, f"not valid JSON: {exc}", file=name) from None
        if not isinstance(record, dict):
            raise PairFormatError(
                number, 'expected a JSON object {"src": ..., "tgt": ...}', file=name
            )
        yield (
            number,
            _text_field(record, "src", number, name),
            _text_field(record, "tgt", number, name),
        )
