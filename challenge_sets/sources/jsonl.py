"""Items from an uploaded JSONL file: all lines or nothing, every bad line named by number.

One JSON object per line: ``source`` and ``src_lang`` (required), ``tgt_lang``,
``translations`` ({system: text}), ``automatic_difficulty`` (0–100), ``id`` (kept as the
reference; a repeated id is an error), ``provenance`` (an object kept as given), and for choice
items ``question``, ``choices`` and ``attested`` (one of the choices).
"""

from __future__ import annotations

from typing import Any

from challenge_sets.sources.base import Candidate, Field, ItemSource, SourceError
from formats.jsonl import LineProblem, read_jsonl

ORIGIN = "jsonl"
MAX_ERRORS = 50
KEYS = {"id", "source", "src_lang", "tgt_lang", "translations", "automatic_difficulty",
        "provenance", "question", "choices", "attested"}  # fmt: skip


def _text(raw: dict, key: str, required: bool = False) -> str:
    value = raw.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValueError(f"{key} must be a {'non-empty ' if required else ''}string")
    return value


def _candidate(raw: Any, number: int, file_name: str) -> Candidate:
    if not isinstance(raw, dict):
        raise ValueError("must be a JSON object")
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        raise ValueError(f"unknown keys {', '.join(unknown)}")
    translations = raw.get("translations") or {}
    if not isinstance(translations, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in translations.items()
    ):
        raise ValueError("translations must be an object of system → non-empty text")
    difficulty = raw.get("automatic_difficulty")
    if difficulty is not None and (
        isinstance(difficulty, bool)
        or not isinstance(difficulty, int | float)
        or not 0 <= difficulty <= 100
    ):
        raise ValueError("automatic_difficulty must be a number from 0 to 100")
    choices = raw.get("choices") or []
    if not isinstance(choices, list) or not all(isinstance(c, str) and c for c in choices):
        raise ValueError("choices must be a list of strings")
    attested = _text(raw, "attested")
    if attested and attested not in choices:
        raise ValueError("attested must be one of the choices")
    provenance = raw.get("provenance") or {}
    if not isinstance(provenance, dict):
        raise ValueError("provenance must be an object")
    ref = raw.get("id", "")
    if not isinstance(ref, str | int) or isinstance(ref, bool):
        raise ValueError("id must be a string or a number")
    return Candidate(
        source=_text(raw, "source", required=True),
        src_lang=_text(raw, "src_lang", required=True),
        tgt_lang=_text(raw, "tgt_lang"),
        origin=ORIGIN,
        origin_ref=f"{file_name}:{ref}" if ref != "" else f"{file_name}:line{number}",
        translations=translations,
        automatic_difficulty=float(difficulty) if difficulty is not None else None,
        provenance={
            "kind": ORIGIN,
            "file": file_name,
            "line": number,
            "id": ref,
            "given": provenance,
        },
        question=_text(raw, "question"),
        choices=tuple(choices),
        attested=attested,
    )


def read_candidates(content: str | bytes, file_name: str) -> list[Candidate]:
    errors: list[str] = []
    found: list[Candidate] = []
    seen: dict[str, int] = {}
    for number, raw in read_jsonl(content):
        if isinstance(raw, LineProblem):
            errors.append(f"line {number}: {raw.reason}")
            continue
        try:
            candidate = _candidate(raw, number, file_name)
        except ValueError as exc:
            errors.append(f"line {number}: {exc}")
            continue
        if candidate.origin_ref in seen:
            errors.append(f"line {number}: id repeats line {seen[candidate.origin_ref]}")
            continue
        seen[candidate.origin_ref] = number
        found.append(candidate)
    if errors:
        more = [f"… and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else []
        raise SourceError(errors[:MAX_ERRORS] + more)
    if not found:
        raise SourceError("the file has no items")
    return found


class JsonlSource(ItemSource):
    name = ORIGIN
    label = "Uploaded JSONL"
    fields = (Field("file", "JSONL file", "file"),)

    def candidates(self, params: dict[str, Any]) -> list[Candidate]:
        upload = params.get("file")
        if upload is None:
            raise SourceError("choose a JSONL file")
        if isinstance(upload, str | bytes):
            return read_candidates(upload, "upload.jsonl")
        return read_candidates(upload.read(), getattr(upload, "name", "upload.jsonl"))
