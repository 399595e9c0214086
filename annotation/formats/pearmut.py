"""Pearmut campaign files (the JSON ``pearmut add`` loads; Pearmut 1.1).

A file is ``{"campaign_id", "info": {"assignment", "protocol", ...}, "data": [...],
"data_welcome"?, "data_goodbye"?, "data_random"?}`` (or a list holding one such campaign).
With ``task-based`` assignment ``data`` is a list of tasks, each a list of documents; otherwise
(``single-stream``, ``dynamic``, the default) it is the list of documents itself. A document is
a list of items ``{"item_id"?, "src"?, "ref"?, "tgt": {system: text}, "instructions"?,
"error_spans"?: {system: [span]}, "validation"?: {system: rule}, "skippable"?}``; several
systems translate each source. Form documents (``{"text", "form"}`` items) collect annotator
metadata and are not translation items.

How they map (ADR 0013):

- one item per system × source item, in file order; ``doc_id`` is the item id of the
  document's first item (its position when it has none), ``seg_id`` the item's ``item_id``
  (its 1-based place in the document when it has none), ``system`` the ``tgt`` key;
- the same (document, item, system, text) in several tasks is one item (Pearmut's tasks are
  per-annotator queues; the platform assigns items itself, ``overlap`` sets how many judge
  each): ``meta.pearmut.tasks`` lists the tasks it was in;
- ``error_spans`` → pre-filled spans; Pearmut's page indexes the raw ``tgt`` string per UTF-16
  code unit with ``end_i`` inclusive, so offsets become code points with ``end`` exclusive;
  ``"Category/Subcategory"`` is split, and the protocol validates the labels; a span on the
  ``[missing]`` token Pearmut shows after the text is the platform's ``[MISSING]`` span;
- ``validation`` → a tutorial (``skippable`` item or ``allow_skip`` rule) or an attention check
  (loud with ``warning``, silent without): ``score: [lo, hi]`` becomes ``score_min``/
  ``score_max``, expected ``error_spans`` (exact offsets or ``[min, max]`` ranges) the part every
  accepted span covers, which an answer must overlap, ``warning`` the explanation. A rule with
  nothing of that (only ``score_greaterthan`` or a custom slider) leaves a regular item with the
  rule kept in ``meta``;
- ``data_welcome`` items are tutorials when they have a rule, ``data_random`` items attention
  checks; ``ref``, ``instructions``, the section and the original rule stay in ``meta.pearmut``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from annotation import html_text
from annotation.formats.errors import WHERE, FormatError, load_json
from annotation.formats.offsets import codepoint_offset

FIELDS = (
    ("info.assignment", "task-based: data is tasks of documents; otherwise documents"),
    ("document (a list of items)", "doc_id: the first item's item_id"),
    ("item_id, src", "seg_id, source"),
    ("tgt: {system: text}", "one item per system: system, target"),
    ("error_spans: {system: [...]}", "pre-filled spans: start_i, end_i in UTF-16 code units "
     "(end inclusive), severity, category \"Category/Subcategory\""),
    ("validation: {system: rule}", "tutorial (skippable, allow_skip) or attention check: score "
     "[min, max], error_spans, warning"),
    ("data_welcome, data_random", "tutorials, attention checks"),
    ("ref, instructions", "kept in meta.pearmut"),
)  # fmt: skip

SECTIONS = ("data_welcome", "data", "data_random", "data_goodbye")
_PER_TASK = "task-based"


def looks_like(document: Any) -> bool:
    if isinstance(document, list) and len(document) >= 1:
        document = document[0]
    return (
        isinstance(document, dict)
        and "campaign_id" in document
        and isinstance(document.get("data"), list)
    )


def _campaign(data: bytes) -> dict[str, Any]:
    document = load_json(data)
    if not looks_like(document):
        raise FormatError("", "a Pearmut campaign is an object with campaign_id, info and data")
    if isinstance(document, list):
        if len(document) != 1:
            raise FormatError(
                "", f"the file holds {len(document)} campaigns; import them one at a time"
            )
        document = document[0]
    info = document.get("info", {})
    if not isinstance(info, dict):
        raise FormatError("info", "info must be an object")
    return dict(document)


def _documents(campaign: dict[str, Any]) -> Iterator[tuple[str, int | None, int, Any]]:
    """(section, task number or None, document number, document) for every document."""
    per_task = campaign.get("info", {}).get("assignment", "single-stream") == _PER_TASK
    for section in SECTIONS:
        documents = campaign.get(section)
        if documents is None:
            continue
        if not isinstance(documents, list):
            raise FormatError(section, f"{section} must be a list")
        if section == "data" and per_task:
            for t, task in enumerate(documents, start=1):
                if not isinstance(task, list):
                    raise FormatError(f"data task {t}", "a task must be a list of documents")
                for d, document in enumerate(task, start=1):
                    yield section, t, d, document
        else:
            for d, document in enumerate(documents, start=1):
                yield section, None, d, document


def _where(section: str, task: int | None, doc: int, item: int | None = None) -> str:
    parts = [section] + ([f"task {task}"] if task else []) + [f"document {doc}"]
    return ", ".join(parts + ([f"item {item}"] if item else []))


def _is_form(document: list[Any]) -> bool:
    return all(isinstance(i, dict) and "text" in i and "form" in i for i in document)


def _offset(value: Any, target: str, where: str, *, end: bool = False) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise FormatError(where, f"span offsets must be integers, got {value!r}")
    try:
        # end_i names the last code unit of the span: the exclusive end is one further.
        return codepoint_offset(target, value + 1 if end else value)
    except ValueError as exc:
        raise FormatError(where, str(exc)) from None


def _labels(raw: dict[str, Any]) -> dict[str, Any]:
    labels: dict[str, Any] = {}
    if raw.get("severity") is not None:
        labels["severity"] = str(raw["severity"]).lower()
    category = str(raw.get("category") or "")
    if category:
        main, _, sub = category.partition("/")
        labels["category"] = main
        if sub and sub != main:  # Pearmut writes "Other/Other" for a category with no subtypes
            labels["subcategory"] = sub
    return labels


def _special_token(span: dict[str, Any], target: str, tokens: list[Any]) -> str | None:
    """The special token a span marks, or None for a span on the text. Pearmut shows its
    ``special_tokens`` (default ``[missing]``) after the target, indexed from its UTF-16 length."""
    length = len(target.encode("utf-16-le")) // 2
    start = span.get("start_i")
    if not isinstance(start, int) or isinstance(start, bool) or start < length:
        return None
    index = start - length
    return str(tokens[index]) if span.get("end_i") == start and index < len(tokens) else ""


def _prefill(raw: Any, target: str, tokens: list[Any], where: str) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise FormatError(where, "error_spans of a system must be a list")
    spans = []
    for number, span in enumerate(raw, start=1):
        at = f"{where}, error_spans[{number}]"
        if not isinstance(span, dict):
            raise FormatError(at, "a span must be an object with start_i and end_i")
        token = _special_token(span, target, tokens)
        if token is not None:
            if token.lower() != "[missing]":
                raise FormatError(at, f"only the [missing] token maps to the platform's [MISSING] "
                                  f"span, not {token or 'an offset past the text'!r}")  # fmt: skip
            spans.append({"start": len(target), "end": len(target), "missing": True,
                          **_labels(span)})  # fmt: skip
            continue
        start = _offset(span.get("start_i"), target, at)
        stop = _offset(span.get("end_i"), target, at, end=True)
        spans.append({"start": start, "end": stop, **_labels(span)})
    return spans


def _bound(value: Any, pick: int, where: str) -> int:
    """An exact offset, or one end of a ``[min, max]`` range (``pick`` 0 or 1)."""
    if isinstance(value, list) and len(value) == 2:
        value = value[pick]
    if not isinstance(value, int) or isinstance(value, bool):
        raise FormatError(where, "expected span offsets must be integers or [min, max] ranges")
    return value


def _expected_span(raw: Any, target: str, where: str) -> dict[str, int]:
    if not isinstance(raw, dict) or "start_i" not in raw or "end_i" not in raw:
        raise FormatError(where, "an expected span needs start_i and end_i")
    # Every accepted answer span covers [latest start, earliest end]; requiring an overlap
    # with it is the platform's check. A range too wide for a common part keeps its hull.
    first, last = _bound(raw["start_i"], 1, where), _bound(raw["end_i"], 0, where)
    if first > last:
        first, last = _bound(raw["start_i"], 0, where), _bound(raw["end_i"], 1, where)
    return {
        "start": _offset(first, target, where),
        "end": _offset(last, target, where, end=True),
    }


def _score_bounds(expected: dict[str, Any], score: Any, where: str) -> None:
    if not (isinstance(score, list) and len(score) == 2) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in score
    ):
        raise FormatError(where, f"validation score must be [min, max], got {score!r}")
    low, high = expected.get("score_min"), expected.get("score_max")
    expected["score_min"] = max(score[0], low) if low is not None else score[0]
    expected["score_max"] = min(score[1], high) if high is not None else score[1]


def _expected(rule: Any, target: str, where: str) -> dict[str, Any]:
    """The platform's ``expected`` of one system's rule(s); empty if nothing is checkable."""
    rules = rule if isinstance(rule, list) else [rule]
    expected: dict[str, Any] = {}
    warnings = []
    for part in rules:
        if not isinstance(part, dict):
            raise FormatError(where, "a validation rule must be an object")
        if "score" in part:
            _score_bounds(expected, part["score"], where)
        spans = part.get("error_spans")
        if spans is not None:
            if not isinstance(spans, list):
                raise FormatError(where, "validation error_spans must be a list")
            if spans:
                expected.setdefault("spans", []).extend(
                    _expected_span(s, target, where) for s in spans
                )
            else:
                expected["no_spans"] = True
        if part.get("warning"):
            warnings.append(str(part["warning"]))
    if expected and warnings:
        expected["explanation"] = " ".join(warnings)
    return expected


def _is_tutorial(item: dict[str, Any], rule: Any, section: str) -> bool:
    rules = rule if isinstance(rule, list) else [rule]
    return (
        section == "data_welcome"
        or bool(item.get("skippable"))
        or any(isinstance(r, dict) and r.get("allow_skip") for r in rules)
    )


def _system_item(
    raw: dict[str, Any], system: str, target: Any, place: dict[str, Any], where: str
) -> dict[str, Any]:
    if not isinstance(target, str):
        raise FormatError(where, f"the translation of {system!r} must be a string")
    source = raw.get("src")
    if not isinstance(source, str) or not source.strip():
        raise FormatError(where, "the platform needs a source: src must be a non-empty string")
    pearmut: dict[str, Any] = {"section": place["section"]}
    pearmut |= {key: raw[key] for key in ("item_id", "ref", "instructions") if key in raw}
    item: dict[str, Any] = {
        "doc_id": place["doc_id"],
        "seg_id": place["seg_id"],
        "source": source,
        "target": target,
        "system": system,
        "meta": {"pearmut": pearmut},
        WHERE: f"{where}, system {system!r}",
    }
    at = f"{where}, system {system!r}"
    # Offsets are converted over the text the annotator sees: the visible text in html mode.
    if place["html"]:
        target = html_text.visible_text(html_text.sanitize(target))
    prefill = _prefill((raw.get("error_spans") or {}).get(system), target, place["tokens"], at)
    if prefill:
        item["prefill_spans"] = prefill
    rule = (raw.get("validation") or {}).get(system)
    if rule is not None:
        pearmut["validation"] = rule
        expected = _expected(rule, target, at)
        if expected:
            tutorial = _is_tutorial(raw, rule, place["section"])
            item["kind"] = "tutorial" if tutorial else "attention_check"
            item["expected"] = expected
    return item


def _check_item(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise FormatError(where, "an item must be an object")
    if not isinstance(raw.get("tgt"), dict) or not raw["tgt"]:
        raise FormatError(where, "tgt must be an object from system names to translations")
    for key in ("error_spans", "validation"):
        if raw.get(key) is not None and not isinstance(raw[key], dict):
            raise FormatError(where, f"{key} must be an object keyed by system name")
        unknown = sorted(set(raw.get(key) or {}) - set(raw["tgt"]))
        if unknown:
            raise FormatError(where, f"{key} names systems with no translation: {unknown}")
    return raw


def _document_items(
    document: Any, section: str, task: int | None, doc: int, tokens: list[Any], html: bool
) -> Iterator[dict[str, Any]]:
    if not isinstance(document, list) or not document:
        raise FormatError(_where(section, task, doc), "a document must be a non-empty list")
    if _is_form(document):
        return
    first = document[0] if isinstance(document[0], dict) else {}
    doc_id = str(first.get("item_id") or f"{section}.{task or 0}.{doc}")
    for i, raw in enumerate(document, start=1):
        where = _where(section, task, doc, i)
        raw = _check_item(raw, where)
        place = {
            "section": section,
            "doc_id": doc_id,
            "seg_id": str(raw.get("item_id") or i),
            "tokens": tokens,
            "html": html,
        }
        for system, target in raw["tgt"].items():
            yield _system_item(raw, system, target, place, where)


def _key(item: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in item.items() if k not in ("meta", WHERE)}, sort_keys=True)


def read_campaign(data: bytes, html: bool = False) -> list[dict[str, Any]]:
    """Every item of the campaign, in file order; raises :class:`FormatError` naming the
    section, task, document and item of the first structural problem (the protocol's own
    checks come after, item by item). With ``html``, span offsets count the visible text of
    the (sanitised) ``tgt`` (ADR 0033)."""
    campaign = _campaign(data)
    tokens = campaign.get("info", {}).get("special_tokens", ["[missing]"])
    if not isinstance(tokens, list):
        raise FormatError("info", "special_tokens must be a list")
    items: dict[str, dict[str, Any]] = {}
    for section, task, doc, document in _documents(campaign):
        for item in _document_items(document, section, task, doc, tokens, html):
            kept = items.setdefault(_key(item), item)
            tasks = kept["meta"]["pearmut"].setdefault("tasks", []) if task else None
            if tasks is not None and task not in tasks:
                tasks.append(task)
    if not items:
        raise FormatError("", "the campaign has no translation items")
    return list(items.values())
