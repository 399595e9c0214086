"""Reading JSON Lines (and whole JSON documents) from untrusted files.

Every importer (campaign items, difficulty datasets, topic corpora) reads JSONL the same way:
UTF-8 (a byte-order mark before the first line is tolerated), blank lines skipped but counted,
each line parsed strictly (``formats/strict_json.py``: no NaN, no duplicate keys, bounded depth),
and each bad line reported with its number so a user sees every problem at once instead of the
first one. A line's problem is yielded, not raised, so the caller decides how many to collect.
A file holding one JSON document (engine lists, run configurations) is decoded the same way by
:func:`read_json_document`, so a byte-order mark is accepted by every command alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from formats import strict_json

Source = str | bytes | IO[str] | IO[bytes] | Iterable[str | bytes]


@dataclass(frozen=True)
class LineProblem:
    """Why a line could not be read as JSON (``reason`` reads well after "line N: ")."""

    reason: str


def _lines(source: Source) -> Iterable[str | bytes]:
    if isinstance(source, str | bytes):
        return source.splitlines()
    return source


def _decode(raw: str | bytes) -> str | LineProblem:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return LineProblem("not valid UTF-8")


def _parse(text: str) -> Any:
    try:
        return strict_json.loads(text)
    except strict_json.JSONSyntaxError as exc:
        return LineProblem(f"not valid JSON ({exc.msg} at column {exc.colno})")
    except strict_json.JSONInputError as exc:
        return LineProblem(f"not valid JSON ({exc})")


def read_jsonl(source: Source) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for every non-blank line of ``source``, numbered from 1.

    ``value`` is the parsed JSON, or a :class:`LineProblem` when the line is not UTF-8 or not
    JSON. ``source`` is the whole text (str or bytes), an open file, or an iterable of lines.
    """
    for number, raw in enumerate(_lines(source), start=1):
        text = _decode(raw)
        if isinstance(text, LineProblem):
            yield number, text
            continue
        if number == 1:
            text = text.removeprefix("\ufeff")
        if text.strip():
            yield number, _parse(text)


class JsonDocumentError(ValueError):
    """Why a file is not one JSON document; the message is one line."""


def read_json_document(data: bytes) -> Any:
    """The JSON value of a whole file's bytes: UTF-8, a leading byte-order mark tolerated,
    parsed as strictly as every other input (no NaN, no duplicate keys, bounded depth)."""
    text = _decode(data)
    if isinstance(text, LineProblem):
        raise JsonDocumentError(text.reason)
    try:
        return strict_json.loads(text.removeprefix("\ufeff"))
    except strict_json.JSONInputError as exc:
        raise JsonDocumentError(f"not valid JSON ({exc})") from None


def sorted_keys(value: Any) -> Any:
    """A JSON value with every object's keys sorted, for files that must read the same from
    every database: PostgreSQL's jsonb does not keep the order keys were written in."""
    if isinstance(value, dict):
        return {key: sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(item) for item in value]
    return value
