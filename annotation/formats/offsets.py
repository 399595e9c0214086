"""Offsets in UTF-16 code units (JavaScript string indices) turned into ours (pure Python).

Browser tools count a character outside the Basic Multilingual Plane (an emoji, a CJK
extension ideograph) as two code units, so every offset after one is larger than the Python
``str`` index (a code point) the platform stores. Converting keeps each span on the characters
the tool marked; an offset that falls between the two halves of such a character cannot be
converted and is refused, never rounded (ADR 0013).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

UNITS = ("codepoint", "utf16")


def codepoint_offset(text: str, utf16_offset: int) -> int:
    """The code-point index of ``utf16_offset`` in ``text``; ``ValueError`` if it falls inside
    a character or beyond the end."""
    units = 0
    for index, char in enumerate(text):
        if units == utf16_offset:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
        if units > utf16_offset:
            raise ValueError(
                f"UTF-16 offset {utf16_offset} falls inside the character {char!r} at {index}"
            )
    if units == utf16_offset:
        return len(text)
    raise ValueError(f"UTF-16 offset {utf16_offset} is beyond the end ({units} code units)")


def _is_offset(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def span_from_utf16(span: Any, text: str) -> Any:
    """``span`` with integer ``start``/``end`` converted; anything else is left for the
    protocol's own checks to refuse (a [MISSING] span is at the end whatever the unit)."""
    if not isinstance(span, Mapping) or span.get("missing"):
        return span
    converted = dict(span)
    for key in ("start", "end"):
        if _is_offset(span.get(key)):
            converted[key] = codepoint_offset(text, span[key])
    return converted


def item_from_utf16(raw: Any) -> Any:
    """An imported item whose ``prefill_spans`` and ``expected.spans`` count UTF-16 code units,
    with those offsets in code points of its ``target``."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("target"), str):
        return raw
    text = raw["target"]
    item = dict(raw)
    if isinstance(raw.get("prefill_spans"), list):
        item["prefill_spans"] = [span_from_utf16(s, text) for s in raw["prefill_spans"]]
    expected = raw.get("expected")
    if isinstance(expected, Mapping) and isinstance(expected.get("spans"), list):
        item["expected"] = {
            **expected,
            "spans": [span_from_utf16(s, text) for s in expected["spans"]],
        }
    return item
