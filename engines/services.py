"""Write use-cases: save, import and export engines, register replay data, check an engine."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from engines.adapters import source_hash
from engines.interfaces import EngineError
from engines.keys import mask_secrets
from engines.models import Engine, ReplayEntry
from engines.registry import get_engine, resolve

__all__ = [
    "EXPORT_FIELDS",
    "EngineCheck",
    "EngineImportError",
    "check_engine",
    "export_engines",
    "import_engines",
    "register_replay",
    "save_engine",
]

# The fields an engine file carries, in this order. There is no key field: keys never leave
# the environment of the processes that use them.
EXPORT_FIELDS = (
    "name",
    "kind",
    "capabilities",
    "description",
    "model",
    "base_url",
    "params",
    "price_in_per_1k",
    "price_out_per_1k",
    "max_concurrency",
    "timeout_s",
    "max_retries",
    "api_key_env",
    "enabled",
)
_SECRET_FIELDS = {"api_key", "key", "secret", "token", "password", "authorization"}
SAMPLE_TEXT = "The committee postponed its decision until the spring, citing a lack of data."
SAMPLE_TRANSLATION_DE = (
    "Der Ausschuss vertagte seine Entscheidung auf das Frühjahr und verwies auf fehlende Daten."
)


class EngineImportError(ValueError):
    """An engine file that cannot be imported; ``problems`` name the entry and field."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _messages(exc: ValidationError) -> list[str]:
    if hasattr(exc, "message_dict"):
        return [f"{field}: {msg}" for field, msgs in exc.message_dict.items() for msg in msgs]
    return list(exc.messages)


def build_engine(data: Mapping[str, Any], instance: Engine | None = None) -> Engine:
    """``instance`` (or a new engine) with the field values set and validated, not saved;
    raises ValidationError. Lets a caller check a whole configuration before writing any of it."""
    engine = instance or Engine()
    for field in EXPORT_FIELDS:
        if field in data:
            setattr(engine, field, data[field])
    engine.full_clean()
    return engine


def save_engine(data: Mapping[str, Any], instance: Engine | None = None) -> Engine:
    """Create (or update ``instance``) from field values, validated; raises ValidationError."""
    engine = build_engine(data, instance)
    engine.save()
    return engine


def _coerce(entry: dict[str, Any]) -> dict[str, Any]:
    data = dict(entry)
    for field in ("price_in_per_1k", "price_out_per_1k"):
        if field in data and not isinstance(data[field], bool):
            # An unparseable price stays as it is; full_clean reports it with the field's name.
            with contextlib.suppress(InvalidOperation):
                data[field] = Decimal(str(data[field]))
    return data


@transaction.atomic
def import_engines(entries: Any) -> dict[str, list[str]]:
    """Create or update engines by name from a list of engine objects, all or nothing.

    Returns ``{"created": [...], "updated": [...]}``. Crowds are saved after the engines they
    name, whatever the order in the file. Raises :class:`EngineImportError` listing every problem;
    then nothing is changed.
    """
    if not isinstance(entries, list):
        raise EngineImportError(["the file must hold a JSON list of engine objects"])
    problems: list[str] = []
    names: set[str] = set()
    for index, entry in enumerate(entries):
        label = f"entry {index + 1}"
        if not isinstance(entry, dict):
            problems.append(f"{label}: not a JSON object")
            continue
        name = entry.get("name")
        label = f"entry {index + 1} ({name})" if isinstance(name, str) else label
        if not isinstance(name, str) or not name:
            problems.append(f"{label}: 'name' is required")
        elif name in names:
            problems.append(f"{label}: the name {name!r} appears twice in the file")
        else:
            names.add(name)
        secret = sorted(k for k in entry if k.lower() in _SECRET_FIELDS)
        if secret:
            problems.append(
                f"{label}: {', '.join(secret)} not accepted: keys are never imported; put the "
                "key in an environment variable and name it in api_key_env"
            )
        unknown = sorted(set(entry) - set(EXPORT_FIELDS) - set(secret))
        if unknown:
            problems.append(f"{label}: unknown field(s) {', '.join(unknown)}")
    if problems:
        raise EngineImportError(problems)
    result: dict[str, list[str]] = {"created": [], "updated": []}
    ordered = sorted(entries, key=lambda e: e.get("kind") == Engine.Kind.ARTIFICIAL_CROWD)
    for entry in ordered:
        existing = Engine.objects.filter(name=entry["name"]).first()
        try:
            with transaction.atomic():
                save_engine(_coerce(entry), existing)
        except ValidationError as exc:
            problems.extend(f"{entry['name']}: {message}" for message in _messages(exc))
            continue
        result["updated" if existing else "created"].append(entry["name"])
    if problems:
        # Roll back every engine already saved: an import is all or nothing.
        transaction.set_rollback(True)
        raise EngineImportError(problems)
    return result


def export_engines() -> list[dict[str, Any]]:
    """Every engine as a JSON-ready object, in the shape ``import_engines`` reads."""
    out = []
    for engine in Engine.objects.order_by("name"):
        row: dict[str, Any] = {}
        for field in EXPORT_FIELDS:
            value = getattr(engine, field)
            row[field] = str(value) if isinstance(value, Decimal) else value
        out.append(row)
    return out


@transaction.atomic
def register_replay(
    engine: Engine | str, rows: Iterable[Mapping[str, Any]], *, src_lang: str, tgt_lang: str
) -> int:
    """Store (or replace) replay data of a ``replay`` engine; all rows or none.

    Each row: ``source`` (required), ``system`` (default ``""``), ``translation`` (optional),
    ``score`` (optional, 0–100, higher = better). A row needs a translation or a score. Rows are
    keyed by (engine, src_lang, tgt_lang, source, system): registering the same key again
    replaces it. Returns the number of rows written.
    """
    record = get_engine(engine)
    if record.kind != Engine.Kind.REPLAY:
        raise EngineError(f"engine {record.name} is not a replay engine", permanent=True)
    if not src_lang or not tgt_lang:
        raise ValueError("src_lang and tgt_lang are required")
    by_key: dict[tuple[str, str], ReplayEntry] = {}
    for number, row in enumerate(rows, start=1):
        source = row.get("source")
        if not isinstance(source, str) or not source.strip():
            raise ValueError(f"replay row {number}: 'source' must be a non-empty string")
        system = row.get("system") or ""
        translation = row.get("translation") or ""
        score = row.get("score")
        if not isinstance(system, str) or not isinstance(translation, str):
            raise ValueError(f"replay row {number}: 'system' and 'translation' must be strings")
        if score is not None:
            if isinstance(score, bool) or not isinstance(score, int | float):
                raise ValueError(f"replay row {number}: 'score' must be a number")
            if not math.isfinite(score) or not 0 <= score <= 100:
                raise ValueError(f"replay row {number}: score {score} is not in 0–100")
        if not translation and score is None:
            raise ValueError(f"replay row {number}: needs a translation or a score")
        digest = source_hash(source)
        by_key[(digest, system)] = ReplayEntry(
            engine=record,
            src_lang=src_lang,
            tgt_lang=tgt_lang,
            source_hash=digest,
            source=source,
            system=system,
            translation=translation,
            score=None if score is None else float(score),
        )
    entries = list(by_key.values())
    ReplayEntry.objects.bulk_create(
        entries,
        batch_size=500,
        update_conflicts=True,
        unique_fields=["engine", "src_lang", "tgt_lang", "source_hash", "system"],
        update_fields=["source", "translation", "score", "updated_at"],
    )
    return len(entries)


@dataclass(frozen=True)
class EngineCheck:
    """The outcome of one sample call made to check an engine."""

    ok: bool
    operation: str
    sample: str
    output: str
    latency_ms: float
    error: str = ""
    permanent: bool = False


def _replayed_sample(engine: Engine) -> ReplayEntry | None:
    """A text the engine can answer when it replays data: its own first entry, or for a crowd
    the first entry of a replay member (a replay translator only knows its own texts, so the
    generic English sample would fail the check and be booked against that member)."""
    if engine.kind == Engine.Kind.REPLAY:
        return ReplayEntry.objects.filter(engine=engine).order_by("id").first()
    if engine.kind != Engine.Kind.ARTIFICIAL_CROWD:
        return None
    members = [*engine.params["translators"], *engine.params["quality_estimators"]]
    replays = Engine.objects.filter(name__in=members, kind=Engine.Kind.REPLAY)
    for member in sorted(replays, key=lambda member: members.index(member.name)):
        entries = ReplayEntry.objects.filter(engine=member).order_by("id")
        if member.params.get("system"):
            entries = entries.filter(system=member.params["system"])
        if (entry := entries.first()) is not None:
            return entry
    return None


def _sample_call(engine: Engine, src: str, tgt: str, text: str) -> tuple[str, str, str]:
    """(operation, sample shown, output shown) of one real call, cache bypassed."""
    scope = "engine_check"
    caps = engine.capabilities
    if engine.kind == Engine.Kind.SYNTHETIC:
        value = resolve(engine, "difficulty", scope).estimate(["synthetic:0:0"], src)[0]
        return "estimate", "synthetic:0:0", f"quality {value:.2f} (difficulty {100 - value:.2f})"
    entry = _replayed_sample(engine)
    if engine.kind == Engine.Kind.REPLAY and entry is None:
        raise EngineError(f"replay engine {engine.name} holds no data yet", permanent=True)
    if entry is not None:
        src, tgt, text = entry.src_lang, entry.tgt_lang, entry.source
        translation = entry.translation
    else:
        translation = SAMPLE_TRANSLATION_DE if (text, tgt) == (SAMPLE_TEXT, "de") else text
    if "translate" in caps:
        translator = resolve(engine, "translate", scope, use_cache=False)
        return "translate", f"{src}→{tgt}: {text}", translator.translate([text], src, tgt)[0]
    if "quality" in caps:
        pair = (text, translation)
        value = resolve(engine, "quality", scope, use_cache=False).score([pair], src, tgt)[0]
        return "score", f"{src}→{tgt}: {pair[0]} ⇒ {pair[1]}", f"quality {value:.1f}"
    if "embed" in caps:
        vector = resolve(engine, "embed", scope, use_cache=False).embed([text])[0]
        head = ", ".join(f"{v:.3f}" for v in vector[:4])
        return "embed", text, f"{len(vector)} dimensions: [{head}, …]"
    if "difficulty" in caps:
        estimator = resolve(engine, "difficulty", scope, use_cache=False)
        value = estimator.estimate([text], src, tgt)[0]
        return "estimate", f"{src}→{tgt}: {text}", f"quality-like {value:.4g}"
    reply = resolve(engine, "chat", scope, use_cache=False).complete(
        [{"role": "user", "content": "Reply with the single word OK."}]
    )
    return "complete", "Reply with the single word OK.", reply.text


def check_engine(
    engine: Engine | str, *, src_lang: str = "en", tgt_lang: str = "de", text: str = SAMPLE_TEXT
) -> EngineCheck:
    """Make one real sample call (no cache) and report its output and latency."""
    record = get_engine(engine)
    start = time.perf_counter()
    try:
        operation, sample, output = _sample_call(record, src_lang, tgt_lang, text)
    except EngineError as exc:
        latency = (time.perf_counter() - start) * 1000
        # Masked again here: this text goes back to the page and the API as it is.
        return EngineCheck(False, "", text, "", latency, mask_secrets(exc.message), exc.permanent)
    latency = (time.perf_counter() - start) * 1000
    return EngineCheck(True, operation, sample, output, latency)
