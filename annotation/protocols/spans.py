"""Error spans over a target text: offsets, grapheme boundaries, overlap (pure Python).

A span is ``{"start": int, "end": int, ...}``: character offsets into the item's ``target`` as
Python ``str`` indices (Unicode code points), ``end`` exclusive. They must fall on
grapheme-cluster boundaries (never inside a combining sequence, an emoji ZWJ sequence or a
variation-selector pair); :func:`grapheme_boundary` is the approximation the server enforces,
the browser uses ``Intl.Segmenter``. A ``[MISSING]`` (omission) span has ``"missing": true`` and
``start == end == len(target)``.

Where the protocol allows it (MQM), a span may say ``"side": "source"``: its offsets are then
into the item's ``source`` (Google marks omissions and source errors there); a span without
``side`` is on the target.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

_JOINERS = {"\u200d", "\ufe0e", "\ufe0f"}


def grapheme_boundary(text: str, index: int) -> bool:
    """Whether ``index`` may start or end a span in ``text`` (an approximation of UAX #29).

    Rejects positions before a combining mark (Mn, Mc, Me), a joiner or variation selector,
    an emoji skin-tone modifier, and positions right after a zero-width joiner.
    """
    if index <= 0 or index >= len(text):
        return 0 <= index <= len(text)
    char, before = text[index], text[index - 1]
    if unicodedata.category(char) in {"Mn", "Mc", "Me"} or char in _JOINERS:
        return False
    if 0x1F3FB <= ord(char) <= 0x1F3FF:
        return False
    return before != "\u200d"


def _is_offset(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


SOURCE = "source"
TARGET = "target"


def is_source_side(span: Mapping[str, Any]) -> bool:
    return span.get("side") == SOURCE


def _side_text(span: Mapping[str, Any], target: str, source: str | None) -> str | None:
    """The text ``span`` marks, or None when its ``side`` is not allowed here."""
    side = span.get("side", TARGET)
    if side == TARGET:
        return target
    if side == SOURCE and source is not None:
        return source
    return None


def span_errors(
    spans: Any, target: str, *, where: str = "spans", source: str | None = None
) -> list[str]:
    """Structural errors of a list of spans over ``target`` (offsets, bounds, boundaries).

    With ``source`` given, spans with ``"side": "source"`` are checked against it instead.
    """
    if not isinstance(spans, list):
        return [f"{where} must be a list"]
    errors = []
    for number, span in enumerate(spans, start=1):
        if not isinstance(span, Mapping):
            errors.append(f"{where}[{number}] must be an object")
            continue
        text = _side_text(span, target, source)
        if text is None:
            allowed = "'source' or 'target'" if source is not None else "'target'"
            errors.append(f"{where}[{number}]: side must be {allowed}, got {span.get('side')!r}")
            continue
        if span.get("missing") and is_source_side(span):
            errors.append(f"{where}[{number}]: a [MISSING] span is on the target side")
            continue
        length = len(text)
        start, end = span.get("start"), span.get("end")
        if not (_is_offset(start) and _is_offset(end)):
            errors.append(f"{where}[{number}]: start and end must be integers")
            continue
        if span.get("missing"):
            if not start == end == length:
                errors.append(
                    f"{where}[{number}]: a [MISSING] span has start = end = {length} "
                    "(the end of the target)"
                )
            continue
        if not 0 <= start < end <= length:
            errors.append(
                f"{where}[{number}]: need 0 <= start < end <= {length}, got {start}..{end}"
            )
        elif not (grapheme_boundary(text, start) and grapheme_boundary(text, end)):
            errors.append(f"{where}[{number}]: {start}..{end} splits a character")
    return errors


def spans_overlap(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    """Half-open intervals overlap (a zero-width [MISSING] span overlaps nothing)."""
    return a_start < b_end and b_start < a_end


def all_overlapped(
    expected_spans: Iterable[Mapping[str, Any]], spans: Iterable[Mapping[str, Any]]
) -> bool:
    """Every expected (target) span is overlapped by a target span of ``spans`` ([MISSING] and
    source-side spans never count)."""
    real = [s for s in spans if not s.get("missing") and not is_source_side(s)]
    return all(
        any(spans_overlap(e["start"], e["end"], s["start"], s["end"]) for s in real)
        for e in expected_spans
    )
