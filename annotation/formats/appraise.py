"""Appraise batches files (the JSON Appraise's ``Examples/`` and WMT campaigns use).

A file is a list of batches ``{"task": {"sourceLanguage", "targetLanguage", ...}, "items":
[...]}``; an item has ``itemType`` (``TGT`` a translation to judge, ``BAD`` a deliberately
broken one, ``REF`` the human reference, ``CHK`` a repeated item), ``sourceText``,
``targetText``, ``documentID``, ``itemID``, ``targetID`` (the system), and ``mqm``: either a list
of pre-highlighted spans, or for a tutorial ``{"tutorial": {"instruction", "score_target"?,
"mqm_target"?}, "payload": [pre-highlighted spans]}``. Spans are ``{"start_i", "end_i",
"severity"}`` in characters of the target, ``"missing"`` for an omission.

How they map (ADR 0013):

- ``TGT`` and ``CHK`` → regular items (``CHK`` keeps its type in ``meta``);
- ``BAD`` → an attention check expecting a score of at most :data:`BAD_SCORE_MAX`;
- ``REF`` → an attention check expecting a score of at least :data:`REF_SCORE_MIN`;
- a check's ``documentID`` is its twin's with ``#bad`` (``#ref``) added: the check takes the
  twin's document (the raw one stays in ``meta``), so that its id and its document context are
  those of an ordinary item;
- a tutorial → a tutorial item: its instruction (tags stripped) is ``expected.instruction``,
  shown with the item before it is answered, a ``score_target`` becomes a
  ±:data:`TUTORIAL_SCORE_TOLERANCE` band, ``mqm_target`` spans must be overlapped (an empty
  list: no span may remain), and its payload is pre-filled. Appraise repeats the same
  tutorials at the head of every batch: the import keeps one of each
  (``annotation.services.campaigns``), so an annotator does each tutorial once.

Appraise's page splits the target with JavaScript's ``split("")``, so its offsets count UTF-16
code units: they are converted to code points here (ADR 0013); an omission (``"missing"``)
becomes the ``[MISSING]`` span at the end of the target.
"""

from __future__ import annotations

import html
import re
from typing import Any, TypeGuard

import langcodes

from annotation import html_text
from annotation.formats.errors import WHERE, FormatError, load_json
from annotation.formats.offsets import codepoint_offset

FIELDS = (
    ("task.sourceLanguage, task.targetLanguage", "src_lang, tgt_lang (eng → en)"),
    ("documentID, itemID, targetID", "doc_id, seg_id, system"),
    ("sourceText, targetText", "source, target"),
    ("itemType", "TGT, CHK: regular; BAD: attention check (score ≤ 50); REF: attention check "
     "(score ≥ 66)"),
    ("mqm (a list)", "pre-filled spans: start_i, end_i in UTF-16 code units (end exclusive), "
     "severity; \"missing\" for an omission"),
    ("mqm.tutorial", "a tutorial (repeated in each batch: kept once): instruction (shown "
     "with the item), score_target (±10), mqm_target spans; mqm.payload is pre-filled"),
)  # fmt: skip

BAD_SCORE_MAX = 50
REF_SCORE_MIN = 66
TUTORIAL_SCORE_TOLERANCE = 10
ITEM_TYPES = ("TGT", "BAD", "REF", "CHK")

_TAG = re.compile(r"<[^>]+>")


def looks_like(document: Any) -> bool:
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(batch, dict) and "items" in batch for batch in document)
        and isinstance(document[0]["items"], list)
        and any(isinstance(i, dict) and "itemType" in i for i in document[0]["items"][:5])
    )


def _language(code: Any, where: str) -> str:
    if not isinstance(code, str) or not code.strip():
        raise FormatError(where, "the batch's task has no source or target language")
    try:
        return str(langcodes.standardize_tag(code.strip()))
    except ValueError:
        raise FormatError(where, f"unknown language code {code!r}") from None


def _text(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise FormatError(where, f"{key} must be a string")
    return value


def _is_offset(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _span(raw: Any, target: str, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise FormatError(where, "a span must be an object with start_i, end_i and severity")
    start, end = raw.get("start_i"), raw.get("end_i")
    span: dict[str, Any] = {"severity": str(raw.get("severity") or "minor").lower()}
    if start == "missing" or end == "missing":
        return {"start": len(target), "end": len(target), "missing": True, **span}
    if not (_is_offset(start) and _is_offset(end)):
        raise FormatError(where, f"span offsets must be integers or 'missing', got {start}..{end}")
    # end_i is exclusive, as ours: "The dog walked outside."[8:14] == "walked".
    try:
        return {
            "start": codepoint_offset(target, start),
            "end": codepoint_offset(target, end),
            **span,
        }
    except ValueError as exc:
        raise FormatError(where, f"span {start}..{end}: {exc}") from None


def _spans(raw: Any, target: str, where: str) -> list[dict[str, Any]]:
    if raw in (None, ""):
        return []
    if not isinstance(raw, list):
        raise FormatError(where, "spans must be a list")
    return [_span(span, target, where) for span in raw]


def _tutorial(
    mqm: dict[str, Any], target: str, where: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    tutorial = mqm.get("tutorial")
    if not isinstance(tutorial, dict):
        raise FormatError(where, "a tutorial's mqm.tutorial must be an object")
    instruction = html.unescape(_TAG.sub("", str(tutorial.get("instruction", "")))).strip()
    expected: dict[str, Any] = {"instruction": instruction} if instruction else {}
    score = tutorial.get("score_target")
    if isinstance(score, int | float) and not isinstance(score, bool):
        expected["score_min"] = max(0, score - TUTORIAL_SCORE_TOLERANCE)
        expected["score_max"] = min(100, score + TUTORIAL_SCORE_TOLERANCE)
    if "mqm_target" in tutorial:
        spans = _spans(tutorial["mqm_target"], target, where)
        if spans:
            expected["spans"] = [
                {key: s[key] for key in ("start", "end", "missing") if key in s} for s in spans
            ]
        else:
            expected["no_spans"] = True
    if not set(expected) - {"instruction"}:
        # "All correct, mark it complete": nothing to check beyond reading the instruction.
        expected["score_min"] = 100 - TUTORIAL_SCORE_TOLERANCE
    return expected, _spans(mqm.get("payload"), target, where)


def _item(raw: Any, languages: tuple[str, str], where: str, html: bool) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise FormatError(where, "an item must be an object")
    item_type = raw.get("itemType")
    if item_type not in ITEM_TYPES:
        raise FormatError(where, f"itemType must be one of {', '.join(ITEM_TYPES)}")
    target = _text(raw, "targetText", where)
    # Offsets are converted over the text the annotator sees: the visible text in html mode.
    spanned = html_text.visible_text(html_text.sanitize(target)) if html else target
    document = str(raw.get("documentID") or "")
    item: dict[str, Any] = {
        "doc_id": document.removesuffix(f"#{item_type.lower()}"),
        "seg_id": str(raw.get("itemID") or ""),
        "src_lang": languages[0],
        "tgt_lang": languages[1],
        "source": _text(raw, "sourceText", where),
        "target": target,
        "system": str(raw.get("targetID") or ""),
        "meta": {"appraise_item_type": item_type, "appraise_item_id": raw.get("itemID")},
        WHERE: where,
    }
    if item["doc_id"] != document:
        item["meta"]["appraise_document_id"] = document
    mqm = raw.get("mqm")
    if isinstance(mqm, dict):
        item["kind"] = "tutorial"
        item["expected"], prefill = _tutorial(mqm, spanned, where)
    else:
        prefill = _spans(mqm, spanned, where)
        if item_type == "BAD":
            item["kind"] = "attention_check"
            item["expected"] = {"score_max": BAD_SCORE_MAX}
        elif item_type == "REF":
            item["kind"] = "attention_check"
            item["expected"] = {"score_min": REF_SCORE_MIN}
    if prefill:
        item["prefill_spans"] = prefill
    return item


def read_batches(data: bytes, html: bool = False) -> list[dict[str, Any]]:
    """Every item of every batch, in file order; raises :class:`FormatError` at the first
    structural problem (the protocol's own checks come after, item by item). With ``html``,
    span offsets count the visible text of the (sanitised) ``targetText`` (ADR 0033)."""
    document = load_json(data)
    if not looks_like(document):
        raise FormatError("", "an Appraise batches file is a list of {task, items} batches")
    items = []
    for b, batch in enumerate(document, start=1):
        task = batch.get("task") if isinstance(batch.get("task"), dict) else {}
        where = f"batch {b}"
        languages = (
            _language(task.get("sourceLanguage"), where),
            _language(task.get("targetLanguage"), where),
        )
        for i, raw in enumerate(batch["items"], start=1):
            items.append(_item(raw, languages, f"batch {b}, item {i}", html))
    return items
