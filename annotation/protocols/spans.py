"""Error spans over a target text: offsets, grapheme boundaries, overlap (pure Python).

A span is ``{"start": int, "end": int, ...}``: character offsets into the item's ``target`` as
Python ``str`` indices (Unicode code points), ``end`` exclusive. They must fall on
extended grapheme-cluster boundaries of UAX #29 (never inside a combining sequence, an emoji ZWJ
sequence, a flag's regional-indicator pair or an Indic conjunct): the server segments with the
``regex`` module's ``\\X``, the browser with ``Intl.Segmenter``, both implementations of the same
Unicode rules. A ``[MISSING]`` (omission) span has ``"missing": true`` and
``start == end == len(target)``.

Where the protocol allows it (MQM), a span may say ``"side": "source"``: its offsets are then
into the item's ``source`` (Google marks omissions and source errors there); a span without
``side`` is on the target.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, TypeGuard

import regex

# One extended grapheme cluster (UAX #29), as Intl.Segmenter's "grapheme" granularity.
_GRAPHEME = regex.compile(r"\X")


@lru_cache(maxsize=256)
def grapheme_boundaries(text: str) -> frozenset[int]:
    """Every index of ``text`` where a span may start or end: 0, the end, and each cluster edge.

    Cached because a submission checks both ends of every span against the same target.
    """
    return frozenset({0, *(match.end() for match in _GRAPHEME.finditer(text))})


def grapheme_boundary(text: str, index: int) -> bool:
    """Whether ``index`` may start or end a span in ``text`` (a grapheme-cluster edge)."""
    return index in grapheme_boundaries(text)


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
