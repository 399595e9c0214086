"""The protocol-independent part of an imported item: fields, kinds, limits (pure Python).

Every protocol shares these checks; what a protocol adds (a required target, choices,
pre-filled spans, the shape of ``expected``) lives in its own module, see
:meth:`annotation.protocols.base.Protocol.normalize_item`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KINDS = ("regular", "attention_check", "tutorial")
ITEM_FIELDS = frozenset(
    {"doc_id", "seg_id", "src_lang", "tgt_lang", "source", "target", "system", "kind",
     "expected", "question", "choices", "questions", "prefill_spans", "origin", "origin_ref",
     "meta"}
)  # fmt: skip
_MAX_LENGTHS = {"doc_id": 255, "seg_id": 64, "src_lang": 16, "tgt_lang": 16, "system": 200,
                "origin": 100, "origin_ref": 255}  # fmt: skip
_TEXT_FIELDS = (
    "doc_id", "seg_id", "src_lang", "tgt_lang", "system", "origin", "origin_ref", "question",
)  # fmt: skip


class ItemError(ValueError):
    """An item that cannot be imported; the message says why."""


def as_int(value: Any) -> int | None:
    """An integer from JSON (``3`` or ``3.0``), never from a boolean; ``None`` otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _as_str(value: Any, field: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ItemError(f"{field} must be a string, got {type(value).__name__}")
    text = str(value)
    limit = _MAX_LENGTHS.get(field)
    if limit and len(text) > limit:
        raise ItemError(f"{field} is longer than {limit} characters")
    return text


def common_fields(raw: Any, defaults: Mapping[str, str] | None) -> dict[str, Any]:
    """Known fields only, text fields as strings, languages defaulted, source and target."""
    if not isinstance(raw, Mapping):
        raise ItemError("each line must be a JSON object")
    unknown = sorted(set(raw) - ITEM_FIELDS)
    if unknown:
        raise ItemError(f"unknown field(s): {', '.join(unknown)}")
    defaults = defaults or {}
    item: dict[str, Any] = {field: _as_str(raw.get(field), field) for field in _TEXT_FIELDS}
    for field in ("src_lang", "tgt_lang"):
        item[field] = item[field] or defaults.get(field, "")
    source = raw.get("source")
    if not isinstance(source, str) or not source.strip():
        raise ItemError("source is required and must be a non-empty string")
    item["source"] = source
    target = raw.get("target")
    if target is not None and not isinstance(target, str):
        raise ItemError("target must be a string")
    item["target"] = target or ""
    return item


def kind(raw: Mapping[str, Any]) -> str:
    value = raw.get("kind") or "regular"
    if value not in KINDS:
        raise ItemError(f"kind must be one of {', '.join(KINDS)}, got {value!r}")
    return value


def meta(raw: Mapping[str, Any]) -> dict[str, Any]:
    value = raw.get("meta")
    if value is not None and not isinstance(value, Mapping):
        raise ItemError("meta must be a JSON object")
    return dict(value or {})


INSTRUCTION = "instruction"
"""``expected.instruction`` of a tutorial: what to do, shown with the item before it is
answered (Appraise's tutorial instruction); ``explanation`` is the feedback shown after."""


def split_instruction(expected: Any, kind_name: str) -> tuple[Any, str]:
    """(``expected`` without its instruction, the instruction or ``""``). Only a tutorial may
    carry one: a check that said what to do would give itself away."""
    if not isinstance(expected, Mapping) or INSTRUCTION not in expected:
        return expected, ""
    text = expected[INSTRUCTION]
    if kind_name != "tutorial":
        raise ItemError("expected.instruction is only for tutorial items")
    if not isinstance(text, str):
        raise ItemError(f"expected.instruction must be a string, got {type(text).__name__}")
    rest = {key: value for key, value in expected.items() if key != INSTRUCTION}
    return rest, text.strip()
