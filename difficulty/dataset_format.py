"""Reading WMT-style difficulty datasets (JSONL, one source segment per line); no Django.

The format is the one in ``shared/data/README.md``: ``langs`` (``"en-cs"``), ``src``,
``tgt`` (``{system: translation}``), ``scores`` (``{system: human score}``), optional
``line_id``, ``doc_id``, ``domain`` and ``ref``; every other field is kept as an *extra* field
(e.g. ``n_annotations``, ``annotations``, or a metric's scores that ``metric:<field>`` evaluates).

Per-annotation rows are read too: the WMT ESA release's other shape, and what a campaign's
per-annotation JSONL export writes (``langs``, ``line_id``?, ``doc_id``, ``seg_id``?,
``domain``?, ``system``, ``src``, ``tgt``, ``annotator``, ``esa_score`` or ``score``). A file whose
first object has ``annotator`` and ``system`` but no ``scores`` is grouped into segments (by
``line_id`` where rows have one, else by document, segment id and source): each system's score
is the mean of its annotators' scores (null scores, non-scorable judgments, are left out),
with ``n_annotations`` and ``annotations`` (``[[annotator, score], ...]``) as in the WMT24 file.

:func:`segment_object` writes a segment back in the same shape (the dataset's download), so
importing an exported dataset gives the same dataset.

Parsing is all-or-nothing: every problem is collected with its line number and nothing is
returned unless the whole file is good, so the importer writes all of it or none.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from formats.jsonl import LineProblem, read_jsonl, sorted_keys

__all__ = [
    "DEFAULT_REFERENCE_NAMES",
    "DEFAULT_REFERENCE_PREFIXES",
    "KNOWN_FIELDS",
    "DatasetFormatError",
    "ParsedSegment",
    "ReferenceRule",
    "parse_jsonl",
    "segment_object",
    "source_key",
    "split_language_pair",
    "textless_source_key",
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


def comma_list(value: str) -> tuple[str, ...]:
    """``"a, b,,c "`` -> ``("a", "b", "c")``: the non-empty, stripped parts."""
    return tuple(part.strip() for part in value.split(",") if part.strip())


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

    @classmethod
    def from_text(cls, names: str, prefixes: str) -> ReferenceRule:
        """The rule as a page, the API or a command takes it: two comma-separated lists."""
        return cls(names=comma_list(names), prefixes=comma_list(prefixes))

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


def textless_source_key(lp: str, segment_key: str) -> str:
    """Identity of a segment whose source text is not known (a WMT DA release has none): its
    language pair and id, kept apart from every :func:`source_key`."""
    return hashlib.sha256(f"\x01{lp}\x00{segment_key}".encode()).hexdigest()


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


def _is_annotation_row(obj: Any) -> bool:
    return isinstance(obj, dict) and "scores" not in obj and {"annotator", "system"} <= set(obj)


def _row_score(row: dict[str, Any]) -> float | None:
    score = row.get("esa_score", row.get("score"))
    if score is None:
        return None
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise ValueError(f"esa_score must be a number or null, got {score!r}")
    return float(score)


_ROW_TEXT = ("system", "annotator", "src", "tgt")
_GROUP_FIELDS = ("langs", "line_id", "doc_id", "seg_id", "domain", "src", "ref")


def _group_key(row: dict[str, Any]) -> tuple[Any, ...]:
    if row.get("line_id") not in (None, ""):
        return (row.get("langs"), "line", str(row["line_id"]))
    return (row.get("langs"), "seg", row.get("doc_id"), row.get("seg_id"), row.get("src"))


def _add_row(segment: dict[str, Any], row: dict[str, Any]) -> None:
    for name in ("src", "ref"):
        if row.get(name) != segment.get(name):
            raise ValueError(f"{name} differs from the segment's first row")
    system = row["system"]
    known = segment["tgt"].setdefault(system, row["tgt"])
    if known != row["tgt"]:
        raise ValueError(f"tgt of {system!r} differs from the segment's first row")
    score = _row_score(row)
    judged = segment["annotations"].setdefault(system, [])
    if score is not None:
        judged.append([row["annotator"], score])


def _check_row(row: dict[str, Any]) -> None:
    for name in _ROW_TEXT:
        if not isinstance(row.get(name), str) or not row[name]:
            raise ValueError(f"{name} must be a non-empty string")


def _grouped_rows(
    objects: list[tuple[int, Any]], fail: Callable[[int, str], None]
) -> list[tuple[int, Any]]:
    """Per-annotation rows grouped into one segment object each, numbered by its first row."""
    segments: dict[tuple[Any, ...], tuple[int, dict[str, Any]]] = {}
    for line_number, obj in objects:
        if isinstance(obj, LineProblem) or not isinstance(obj, dict):
            fail(line_number, obj.reason if isinstance(obj, LineProblem) else "not an object")
            continue
        try:
            _check_row(obj)
            key = _group_key(obj)
            if key not in segments:
                first = {f: obj[f] for f in _GROUP_FIELDS if obj.get(f) not in (None, "")}
                segments[key] = (line_number, first | {"tgt": {}, "annotations": {}})
            _add_row(segments[key][1], obj)
        except ValueError as exc:
            fail(line_number, str(exc))
    return [(number, _segment_from_rows(segment)) for number, segment in segments.values()]


def _segment_from_rows(segment: dict[str, Any]) -> dict[str, Any]:
    annotations = segment["annotations"]
    segment["scores"] = {
        system: round(sum(s for _, s in judged) / len(judged), 6) if judged else None
        for system, judged in annotations.items()
    }
    segment["n_annotations"] = {system: len(judged) for system, judged in annotations.items()}
    return segment


def parse_jsonl(lines: Iterable[bytes | str], max_errors: int = 20) -> list[ParsedSegment]:
    """Parse every line; raise :class:`DatasetFormatError` listing up to ``max_errors`` problems.

    Blank lines are skipped. A ``line_id`` may appear only once per language pair. A file of
    per-annotation rows is grouped into segments first (see the module's docstring).
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

    # Whole files (bounded by the upload limit): per-annotation rows are grouped before parsing.
    objects = list(read_jsonl(lines))
    first = next((obj for _, obj in objects if not isinstance(obj, LineProblem)), None)
    if _is_annotation_row(first):
        objects = _grouped_rows(objects, fail)
    for line_number, obj in objects:
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


def _line_id(segment_key: str) -> str | int:
    """WMT files number their lines: a key that reads as a plain number is written as one."""
    if segment_key.isdigit() and segment_key == str(int(segment_key)):
        return int(segment_key)
    return segment_key


def segment_object(
    *,
    lp: str,
    source: str,
    scores: dict[str, float | None],
    translations: dict[str, str],
    segment_key: str = "",
    doc_id: str = "",
    domain: str = "",
    reference: str = "",
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One JSONL line of a dataset, in the WMT release's key order; empty fields left out."""
    obj: dict[str, Any] = {"langs": lp}
    if segment_key:
        obj["line_id"] = _line_id(segment_key)
    for key, value in (("doc_id", doc_id), ("domain", domain)):
        if value:
            obj[key] = value
    obj["src"] = source
    if reference:
        obj["ref"] = reference
    # Objects inside come out with sorted keys (systems in name order, as the WMT files have
    # them), so a download reads the same from SQLite and PostgreSQL.
    obj["scores"] = sorted_keys(scores)
    obj |= {k: sorted_keys(v) for k, v in sorted((extra or {}).items()) if k not in KNOWN_FIELDS}
    if translations:
        obj["tgt"] = sorted_keys(translations)
    return obj
