"""Item and answer shapes of the three protocols, and their validation (pure Python, no Django).

Offsets. A span is ``{"start": int, "end": int, ...}``: character offsets into the item's
``target`` as Python ``str`` indices (Unicode code points), ``end`` exclusive. They must fall on
grapheme-cluster boundaries (never inside a combining sequence, an emoji ZWJ sequence or a
variation-selector pair); :func:`grapheme_boundary` is the approximation the server enforces,
the browser uses ``Intl.Segmenter``. A ``[MISSING]`` (omission) span has ``"missing": true`` and
``start == end == len(target)``.

Answers (``Annotation.answer`` / ``Annotation.draft``):

- ``esa``: ``{"spans": [{"start", "end", "severity": "minor"|"major", "missing"?}],
  "score": 0..100, "confirmed_low_score"?: bool}``. A score below :data:`ESA_LOW_SCORE` with no
  span must be confirmed (the page asks).
- ``mqm``: ``{"spans": [{"start", "end", "severity", "category", "subcategory", "missing"?,
  "comment"?}], "no_errors": bool}``; with no span, ``no_errors`` must be true (an explicit
  "no error" instead of an untouched form).
- ``choice``: ``{"selected": [indices into item.choices], "confidence": 1..5 | null,
  "comment": str}``; indices refer to the item's original option order, whatever order the
  annotator saw (kept in ``Annotation.option_order``).

Expected answers (``Item.expected`` for attention checks and tutorials):

- ``esa``/``mqm``: ``{"score_min"?, "score_max"?, "spans"?: [{"start", "end"}], "no_spans"?,
  "explanation"?}``; every listed span must be overlapped by an annotator span, the score
  (0–100; for MQM the mapped score) must be within the bounds. Generated checks use
  ``{"type": "corrupted", "original_item_id": id, "spans": [...]}``.
- ``choice``: an option string, a list of them, or ``{"selected": [...], "explanation"?}``,
  stored as ``{"selected": [option strings]}``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from annotation import scoring

PROTOCOLS = ("esa", "mqm", "choice")
KINDS = ("regular", "attention_check", "tutorial")
ESA_SEVERITIES = ("minor", "major")
ESA_LOW_SCORE = 66
"""Scores below "most meaning preserved" with no error span marked ask for confirmation."""
ESA_ANCHORS = ((0, "No meaning preserved"), (33, "Some meaning preserved"),
               (66, "Most meaning preserved, few errors"), (100, "Perfect"))  # fmt: skip
CONFIDENCE_LEVELS = (1, 2, 3, 4, 5)
MAX_CHOICES = 20

ITEM_FIELDS = frozenset(
    {"doc_id", "seg_id", "src_lang", "tgt_lang", "source", "target", "system", "kind",
     "expected", "question", "choices", "prefill_spans", "origin", "origin_ref", "meta"}
)  # fmt: skip
_MAX_LENGTHS = {"doc_id": 255, "seg_id": 64, "src_lang": 16, "tgt_lang": 16, "system": 200,
                "origin": 100, "origin_ref": 255}  # fmt: skip

_JOINERS = {"\u200d", "\ufe0e", "\ufe0f"}


class ItemError(ValueError):
    """An item that cannot be imported; the message says why."""


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


def span_errors(spans: Any, target: str, *, where: str = "spans") -> list[str]:
    """Structural errors of a list of spans over ``target`` (offsets, bounds, boundaries)."""
    if not isinstance(spans, list):
        return [f"{where} must be a list"]
    errors = []
    length = len(target)
    for number, span in enumerate(spans, start=1):
        if not isinstance(span, Mapping):
            errors.append(f"{where}[{number}] must be an object")
            continue
        start, end = span.get("start"), span.get("end")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
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
        elif not (grapheme_boundary(target, start) and grapheme_boundary(target, end)):
            errors.append(f"{where}[{number}]: {start}..{end} splits a character")
    return errors


def _normalize_expected(protocol: str, expected: Any, item: dict[str, Any]) -> Any:
    if protocol == "choice":
        if isinstance(expected, str):
            selected = [expected]
        elif isinstance(expected, list):
            selected = expected
        elif isinstance(expected, Mapping) and isinstance(expected.get("selected"), list):
            selected = expected["selected"]
        else:
            raise ItemError("expected must be an option, a list of options or {'selected': [...]}")
        unknown = [s for s in selected if s not in item["choices"]]
        if not selected or unknown:
            raise ItemError(f"expected option(s) not among the choices: {unknown or selected}")
        normalized: dict[str, Any] = {"selected": list(selected)}
        if isinstance(expected, Mapping) and expected.get("explanation"):
            normalized["explanation"] = str(expected["explanation"])
        return normalized
    if not isinstance(expected, Mapping):
        raise ItemError("expected must be an object with score_min/score_max/spans/no_spans")
    allowed = {"score_min", "score_max", "spans", "no_spans", "explanation", "type",
               "original_item_id"}  # fmt: skip
    if expected.get("type", "corrupted") != "corrupted" or (
        "type" in expected and _int(expected.get("original_item_id")) is None
    ):
        raise ItemError("expected.type 'corrupted' needs an integer original_item_id")
    unknown_keys = sorted(set(expected) - allowed)
    if unknown_keys:
        raise ItemError(f"unknown key(s) in expected: {', '.join(unknown_keys)}")
    if not set(expected) - {"explanation", "type", "original_item_id"}:
        raise ItemError("expected needs at least one of score_min, score_max, spans, no_spans")
    for key in ("score_min", "score_max"):
        value = expected.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100
        ):
            raise ItemError(f"expected.{key} must be a number between 0 and 100")
    if "spans" in expected:
        errors = span_errors(expected["spans"], item["target"], where="expected.spans")
        if errors:
            raise ItemError("; ".join(errors))
    return dict(expected)


def normalize_item(protocol: str, raw: Any, defaults: Mapping[str, str] | None = None) -> dict:
    """Validate one imported item and return it with every field present.

    ``defaults`` fills ``src_lang``/``tgt_lang`` from the campaign. Raises :class:`ItemError`
    with a reason a person can act on.
    """
    if protocol not in PROTOCOLS:
        raise ItemError(f"unknown protocol {protocol!r}")
    if not isinstance(raw, Mapping):
        raise ItemError("each line must be a JSON object")
    unknown = sorted(set(raw) - ITEM_FIELDS)
    if unknown:
        raise ItemError(f"unknown field(s): {', '.join(unknown)}")
    defaults = defaults or {}
    item: dict[str, Any] = {
        field: _as_str(raw.get(field), field)
        for field in (
            "doc_id",
            "seg_id",
            "src_lang",
            "tgt_lang",
            "system",
            "origin",
            "origin_ref",
            "question",
        )
    }
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
    if protocol in ("esa", "mqm"):
        if not item["target"].strip():
            raise ItemError("target is required for esa and mqm items")
        missing_ids = [f for f in ("doc_id", "seg_id") if not item[f]]
        if missing_ids:
            raise ItemError(f"{' and '.join(missing_ids)} required for esa and mqm items")
    kind = raw.get("kind") or "regular"
    if kind not in KINDS:
        raise ItemError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    item["kind"] = kind

    choices = raw.get("choices")
    if protocol == "choice":
        if not isinstance(choices, list) or not all(isinstance(c, str) and c for c in choices):
            raise ItemError("choices must be a list of non-empty strings")
        if not 2 <= len(choices) <= MAX_CHOICES:
            raise ItemError(f"choices needs 2 to {MAX_CHOICES} options, got {len(choices)}")
        if len(set(choices)) != len(choices):
            raise ItemError("choices must be distinct")
    elif choices:
        raise ItemError("choices are only for choice campaigns")
    item["choices"] = list(choices or [])

    prefill = raw.get("prefill_spans") or []
    if prefill and protocol == "choice":
        raise ItemError("prefill_spans are only for esa and mqm items")
    errors = span_errors(prefill, item["target"], where="prefill_spans")
    if not errors:
        for number, span in enumerate(prefill, start=1):
            if span.get("severity", "minor") not in scoring.SEVERITIES:
                errors.append(f"prefill_spans[{number}]: unknown severity {span.get('severity')!r}")
    if errors:
        raise ItemError("; ".join(errors))
    item["prefill_spans"] = [
        {"start": s["start"], "end": s["end"], "severity": s.get("severity", "minor"),
         **({"missing": True} if s.get("missing") else {}),
         **{k: str(s[k]) for k in ("category", "subcategory") if s.get(k)}}
        for s in prefill
    ]  # fmt: skip

    meta = raw.get("meta")
    if meta is not None and not isinstance(meta, Mapping):
        raise ItemError("meta must be a JSON object")
    item["meta"] = dict(meta or {})

    expected = raw.get("expected")
    if kind == "regular":
        if expected is not None:
            raise ItemError("expected is only for attention_check and tutorial items")
        item["expected"] = None
    else:
        if expected is None:
            raise ItemError(f"{kind} items need expected")
        item["expected"] = _normalize_expected(protocol, expected, item)
    return item


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def clean_answer(
    protocol: str,
    answer: Any,
    *,
    target: str = "",
    n_choices: int = 0,
    multi_select: bool = False,
    severities: tuple[str, ...] | list[str] = ESA_SEVERITIES,
    ask_confidence: bool = True,
) -> tuple[dict[str, Any], list[str], list[str]]:
    """Normalize an answer and sort what is wrong into two lists.

    Returns ``(answer, errors, missing)``: ``errors`` are invalid values (never saved, not even
    as a draft); ``missing`` is what a submission still needs, in words for the annotator's
    checklist. A draft is saved when ``errors`` is empty; a submission needs both lists empty.
    """
    if not isinstance(answer, Mapping):
        return {}, ["the answer must be a JSON object"], []
    errors: list[str] = []
    missing: list[str] = []
    if protocol in ("esa", "mqm"):
        raw_spans = answer.get("spans", [])
        errors += span_errors(raw_spans, target)
        spans: list[dict[str, Any]] = []
        if not errors:
            for number, span in enumerate(raw_spans, start=1):
                clean: dict[str, Any] = {"start": span["start"], "end": span["end"]}
                if span.get("missing"):
                    clean["missing"] = True
                severity = span.get("severity")
                if severity not in severities:
                    errors.append(f"span {number}: severity must be one of {', '.join(severities)}")
                clean["severity"] = severity
                if protocol == "mqm":
                    category = str(span.get("category") or "")
                    subcategory = str(span.get("subcategory") or "")
                    if not category:
                        missing.append(f"span {number}: choose a category")
                    else:
                        try:
                            category = scoring.canonical_category(category)
                            scoring.validate_span(
                                {"category": category, "subcategory": subcategory,
                                 "severity": severity or "minor"},
                                allow_critical="critical" in severities,
                            )  # fmt: skip
                        except ValueError as exc:
                            errors.append(f"span {number}: {exc}")
                        if scoring.MQM_TYPOLOGY.get(category) and not subcategory:
                            missing.append(f"span {number}: choose a subcategory of {category}")
                    clean["category"] = category
                    clean["subcategory"] = subcategory
                    comment = span.get("comment")
                    if comment:
                        clean["comment"] = str(comment)[:2000]
                spans.append(clean)
        cleaned: dict[str, Any] = {"spans": spans}
        if protocol == "esa":
            score = answer.get("score")
            if score is None or score == "":
                missing.append("give a 0–100 score")
                cleaned["score"] = None
            else:
                value = _int(score)
                if value is None or not 0 <= value <= 100:
                    errors.append("the score must be a whole number from 0 to 100")
                    cleaned["score"] = None
                else:
                    cleaned["score"] = value
                    confirmed = bool(answer.get("confirmed_low_score"))
                    cleaned["confirmed_low_score"] = confirmed
                    if value < ESA_LOW_SCORE and not spans and not confirmed:
                        missing.append(
                            f"confirm the score {value} although no error span is marked"
                        )
        else:
            no_errors = bool(answer.get("no_errors"))
            cleaned["no_errors"] = no_errors
            if spans and no_errors:
                errors.append("'no errors' is ticked but error spans are marked")
            if not spans and not no_errors:
                missing.append("mark error spans, or tick 'no errors'")
        return cleaned, errors, missing
    if protocol == "choice":
        raw_selected = answer.get("selected", [])
        selected: list[int] = []
        if not isinstance(raw_selected, list):
            errors.append("selected must be a list of option indices")
        else:
            for value in raw_selected:
                index = _int(value)
                if index is None or not 0 <= index < n_choices:
                    errors.append(f"option {value!r} does not exist")
                elif index not in selected:
                    selected.append(index)
        if not multi_select and len(selected) > 1:
            errors.append("choose only one option")
        if not selected:
            missing.append("choose an option" if not multi_select else "choose at least one option")
        confidence = answer.get("confidence")
        if confidence in (None, ""):
            confidence = None
            if ask_confidence:
                missing.append("rate your confidence")
        else:
            confidence = _int(confidence)
            if confidence not in CONFIDENCE_LEVELS:
                errors.append("confidence must be 1 to 5")
                confidence = None
        comment = answer.get("comment") or ""
        if not isinstance(comment, str):
            errors.append("comment must be text")
            comment = ""
        return (
            {"selected": selected, "confidence": confidence, "comment": comment[:5000]},
            (errors),
            missing,
        )
    return {}, [f"unknown protocol {protocol!r}"], []


def spans_overlap(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    """Half-open intervals overlap (a zero-width [MISSING] span overlaps nothing)."""
    return a_start < b_end and b_start < a_end
