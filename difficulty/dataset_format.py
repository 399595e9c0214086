"""Reading WMT-style difficulty datasets (JSONL, one source segment per line); no Django.

The format is the one in ``shared/data/README.md``: ``langs`` (``"en-cs"``), ``src``,
``tgt`` (``{system: translation}``), ``scores`` (``{system: human score}``), optional
``line_id``, ``doc_id``, ``domain`` and ``ref``; every other field is kept as an *extra* field
(e.g. ``n_annotations``, ``annotations``, or a metric's scores that ``metric:<field>`` evaluates).

Parsing is all-or-nothing: every problem is collected with its line number and nothing is
returned unless the whole file is good, so the importer writes all of it or none.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from formats.jsonl import LineProblem, read_jsonl

__all__ = [
    "DEFAULT_REFERENCE_NAMES",
    "DEFAULT_REFERENCE_PREFIXES",
    "KNOWN_FIELDS",
    "DatasetFormatError",
    "ParsedSegment",
    "ReferenceRule",
    "parse_jsonl",
    "source_key",
    "split_language_pair",
]

KNOWN_FIELDS = frozenset({"langs", "src", "tgt", "scores", "line_id", "doc_id", "domain", "ref"})
DEFAULT_REFERENCE_NAMES = ("refA", "refB")
DEFAULT_REFERENCE_PREFIXES = ("ref", "human")
MAX_SYSTEM_NAME = 200
# Language codes such as "en", "cs", "zh_Hant" or "pt_BR"; the pair joins two with one "-".
_LANG = re.compile(r"^[A-Za-z]{2,3}(?:_[A-Za-z0-9]{2,8})*$")


class DatasetFormatError(ValueError):
    """The file cannot be imported; ``errors`` lists each problem as ``line N: reason``."""

    def __init__(self, errors: list[str], truncated: bool = False) -> None:
        self.errors = errors
        self.truncated = truncated
        more = " (and more; only the first are listed)" if truncated else ""
        super().__init__("; ".join(errors) + more)


@dataclass(frozen=True)
class ReferenceRule:
    """Which systems are human reference translators, left out of evaluation by default.

    A system is a reference when its name is one of ``names`` (exactly) or starts with one of
    ``prefixes`` (ignoring case).
    """

    names: tuple[str, ...] = DEFAULT_REFERENCE_NAMES
    prefixes: tuple[str, ...] = DEFAULT_REFERENCE_PREFIXES

    def is_reference(self, system: str) -> bool:
        lowered = system.lower()
        return system in self.names or any(lowered.startswith(p.lower()) for p in self.prefixes)

    def as_dict(self) -> dict[str, list[str]]:
        return {"names": list(self.names), "prefixes": list(self.prefixes)}


@dataclass
class ParsedSegment:
    line_number: int
    lp: str
    src_lang: str
    tgt_lang: str
    source: str
    scores: dict[str, float | None]
    translations: dict[str, str] = field(default_factory=dict)
    segment_key: str = ""
    doc_id: str = ""
    domain: str = ""
    reference: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def split_language_pair(code: str) -> tuple[str, str]:
    """``"en-cs"`` → ``("en", "cs")``; ValueError for anything else."""
    parts = code.split("-")
    if len(parts) != 2 or not all(_LANG.match(p) for p in parts):
        raise ValueError(f"langs must look like 'en-cs', got {code!r}")
    return parts[0], parts[1]


def source_key(src_lang: str, text: str) -> str:
    """Identity of a source text across language pairs (sha256 of language and text)."""
    return hashlib.sha256(f"{src_lang}\x00{text}".encode()).hexdigest()


def _short_id(value: Any, name: str, limit: int) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(f"{name} must be a string or an integer")
    text = str(value)
    if len(text) > limit:
        raise ValueError(f"{name} is longer than {limit} characters")
    return text


def _parse_scores(value: Any) -> dict[str, float | None]:
    if not isinstance(value, dict) or not value:
        raise ValueError("scores must be a non-empty object {system: score}")
    scores: dict[str, float | None] = {}
    for system, score in value.items():
        if not system or len(system) > MAX_SYSTEM_NAME:
            raise ValueError(f"system name {system!r} must have 1 to {MAX_SYSTEM_NAME} characters")
        if score is None:
            scores[system] = None
            continue
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise ValueError(f"score of {system!r} must be a number or null, got {score!r}")
        if not math.isfinite(score):
            raise ValueError(f"score of {system!r} must be finite")
        scores[system] = float(score)
    if all(score is None for score in scores.values()):
        raise ValueError("scores has no number: every system's score is null")
    return scores


def _parse_translations(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError("tgt must be an object {system: translation text}")
    return dict(value)


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False


def _parse_extra(obj: dict[str, Any]) -> dict[str, Any]:
    extra = {k: v for k, v in obj.items() if k not in KNOWN_FIELDS}
    for key, value in extra.items():
        # Python's json reads NaN and Infinity, but they are not JSON: the database's JSON
        # column refuses them, which would fail the whole import with an internal error.
        if _has_non_finite(value):
            raise ValueError(f"field {key!r} holds NaN or Infinity, which JSON does not allow")
    return extra


def _parse_object(obj: Any, line_number: int) -> ParsedSegment:
    if not isinstance(obj, dict):
        raise ValueError("each line must be a JSON object")
    for required in ("langs", "src", "scores"):
        if required not in obj:
            raise ValueError(f"missing field {required!r}")
    if not isinstance(obj["langs"], str):
        raise ValueError("langs must be a string such as 'en-cs'")
    src_lang, tgt_lang = split_language_pair(obj["langs"])
    source = obj["src"]
    if not isinstance(source, str) or not source.strip():
        raise ValueError("src must be a non-empty string")
    reference = obj.get("ref") or ""
    if not isinstance(reference, str):
        raise ValueError("ref must be a string")
    return ParsedSegment(
        line_number=line_number,
        lp=obj["langs"],
        src_lang=src_lang,
        tgt_lang=tgt_lang,
        source=source,
        scores=_parse_scores(obj["scores"]),
        translations=_parse_translations(obj.get("tgt")),
        segment_key=_short_id(obj.get("line_id"), "line_id", 100),
        doc_id=_short_id(obj.get("doc_id"), "doc_id", 255),
        domain=_short_id(obj.get("domain"), "domain", 100),
        reference=reference,
        extra=_parse_extra(obj),
    )


def parse_jsonl(lines: Iterable[bytes | str], max_errors: int = 20) -> list[ParsedSegment]:
    """Parse every line; raise :class:`DatasetFormatError` listing up to ``max_errors`` problems.

    Blank lines are skipped. A ``line_id`` may appear only once per language pair.
    """
    segments: list[ParsedSegment] = []
    errors: list[str] = []
    truncated = False
    seen_keys: dict[tuple[str, str], int] = {}

    def fail(line_number: int, reason: str) -> None:
        nonlocal truncated
        if len(errors) < max_errors:
            errors.append(f"line {line_number}: {reason}")
        else:
            truncated = True

    for line_number, obj in read_jsonl(lines):
        if isinstance(obj, LineProblem):
            fail(line_number, obj.reason)
            continue
        try:
            segment = _parse_object(obj, line_number)
        except ValueError as exc:
            fail(line_number, str(exc))
            continue
        if segment.segment_key:
            key = (segment.lp, segment.segment_key)
            if key in seen_keys:
                fail(
                    line_number,
                    f"line_id {segment.segment_key!r} of {segment.lp} already on line "
                    f"{seen_keys[key]}",
                )
                continue
            seen_keys[key] = line_number
        segments.append(segment)
    if not segments and not errors:
        errors.append("line 1: the file has no segments")
    if errors:
        raise DatasetFormatError(errors, truncated)
    return segments
