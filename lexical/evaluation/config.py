"""An evaluation's configuration, validated from the form, the API or the command line (the
evaluation is created by ``lexical.evaluation.services.start_lexical_evaluation``). One
dictionary shape serves all three::

    {"selection": 3, "entries": ["gpt:none", "gpt:self", "llama:other:gpt", "nllb:translate"],
     "runs": 3, "seed": 1234, "name": "..."}

Entries may also be objects ``{"engine", "setting", "generator"}``. Every problem is reported at
once, keyed by field, and nothing is written. What the evaluation will ask (the examples, their
concepts' variations and the rules of each generator) is frozen into ``snapshot`` here.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from engines.models import Engine
from engines.registry import refusal
from lexical.evaluation import rule_source
from lexical.evaluation.entries import CHAT, TRANSLATE, Entry, EntryError, parse_entry
from lexical.models import ExampleSelection, SelectedExample, Variation
from rounds.refusal import JobConfigError

__all__ = ["EvaluationConfigError", "items_total", "validate_evaluation"]

MAX_ENTRIES = 40
MAX_RUNS = 10
_MAX_ID = 2**63 - 1
_KNOWN = {"name", "selection", "entries", "runs", "seed"}


class EvaluationConfigError(JobConfigError):
    """An evaluation configuration that cannot run."""


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _selection(value: Any, errors: dict) -> ExampleSelection | None:
    if not _int(value) or not 0 < value <= _MAX_ID:
        errors["selection"] = "name an example selection by its id (a positive integer)"
        return None
    selection = ExampleSelection.objects.filter(pk=value).first()
    if selection is None:
        errors["selection"] = f"there is no example selection #{value}"
    elif not SelectedExample.objects.filter(selection=selection).exists():
        errors["selection"] = f"example selection #{value} has no examples"
        return None
    return selection


def _entry(value: Any) -> Entry:
    if isinstance(value, Mapping):
        engine, setting = value.get("engine"), value.get("setting")
        generator = value.get("generator") or ""
        if not all(isinstance(v, str) for v in (engine, setting, generator)):
            raise EntryError("engine, setting and generator are strings")
        spec = f"{engine}:other:{generator}" if setting == "other" else f"{engine}:{setting}"
        return parse_entry(spec)
    return parse_entry(value)


def _entries(value: Any, errors: dict) -> list[Entry]:
    if not isinstance(value, list) or not value:
        errors["entries"] = "list at least one entry (NAME:none, NAME:self, NAME:other:GEN, ...)"
        return []
    if len(value) > MAX_ENTRIES:
        errors["entries"] = f"at most {MAX_ENTRIES} entries"
        return []
    entries, problems = [], []
    for i, item in enumerate(value, start=1):
        try:
            entries.append(_entry(item))
        except EntryError as exc:
            problems.append(f"entry {i}: {exc}")
    keys = [e.key for e in entries]
    problems += [f"{key} is listed twice" for key in sorted({k for k in keys if keys.count(k) > 1})]
    engines = {e.name: e for e in Engine.objects.filter(name__in={e.engine for e in entries})}
    for entry in entries:
        capability = "chat" if entry.kind == CHAT else "translate"
        problem = refusal(engines.get(entry.engine), entry.engine, capability)
        if problem:
            problems.append(problem)
    if problems:
        errors["entries"] = "; ".join(dict.fromkeys(problems))
    return entries


def _bounded_int(config: Mapping, field: str, low: int, high: int, default: int, errors: dict):
    value = config.get(field, default)
    if value in (None, ""):
        return default
    if not _int(value) or not low <= value <= high:
        errors[field] = f"an integer from {low} to {high}"
        return default
    return value


def _example(example) -> dict[str, Any]:
    return {
        "id": example.pk,
        "concept": example.concept_id,
        "variation": example.variation_id,
        "source": example.source_text,
    }


def _snapshot(selection: ExampleSelection) -> dict[str, Any]:
    """The examples in selection order and their concepts' live (not dropped) variations."""
    selected = (
        SelectedExample.objects.filter(selection=selection)
        .select_related("example__pair", "example__concept")
        .order_by("position")
    )
    examples = [s.example for s in selected]
    concept_ids = {e.concept_id for e in examples}
    variations: dict[int, list[dict[str, Any]]] = {c: [] for c in concept_ids}
    for v in Variation.objects.filter(concept_id__in=concept_ids, dropped=False):
        forms = list(dict.fromkeys([*(v.surface_forms or []), v.lemma]))
        variations[v.concept_id].append(
            {"id": v.pk, "label": v.label, "forms": forms, "count": v.count}
        )
    live = {v["id"] for vs in variations.values() for v in vs}
    kept = [e for e in examples if e.variation_id in live]
    concepts = {
        str(e.concept_id): {
            "lemma": e.concept.lemma,
            "language": e.concept.tgt_lang,
            "variations": variations[e.concept_id],
        }
        for e in kept
    }
    return {
        "src_lang": selection.src_lang,
        "tgt_lang": selection.tgt_lang,
        "concepts": concepts,
        "examples": [_example(e) for e in kept],
        "rules": {},
        # Examples whose attested variation was dropped since the selection: nothing to grade.
        "skipped": len(examples) - len(kept),
    }


def _rules(entries: list[Entry], snapshot: dict, errors: dict) -> None:
    """Freeze every generator's rules; a concept without a rule for each variation is refused."""
    generators = sorted({e.generator for e in entries if e.uses_rules})
    concepts = snapshot["concepts"]
    problems = []
    for generator in generators:
        found = rule_source.rules_for([int(c) for c in concepts], generator)
        missing = [
            concepts[c]["lemma"]
            for c in concepts
            if any(v["id"] not in found.get(int(c), {}) for v in concepts[c]["variations"])
        ]
        if missing:
            shown = ", ".join(missing[:10]) + (" …" if len(missing) > 10 else "")
            problems.append(f"{generator} has no rules for every variation of: {shown}")
            continue
        snapshot["rules"][generator] = {
            c: {str(v): text for v, text in found[int(c)].items()} for c in concepts
        }
    if problems:
        errors["entries"] = "; ".join([*filter(None, [errors.get("entries")]), *problems])


def validate_evaluation(config: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """The fields of a new evaluation, and the problems (empty when it can run)."""
    errors: dict[str, str] = {}
    if not isinstance(config, Mapping):
        return {}, {"non_field_errors": "the configuration is a JSON object"}
    unknown = sorted(str(k)[:40] for k in config if k not in _KNOWN)
    if unknown:
        errors["non_field_errors"] = f"unknown fields: {', '.join(unknown)}"
    name = config.get("name") or ""
    if not isinstance(name, str) or len(name) > 200:
        errors["name"] = "a name of at most 200 characters"
        name = ""
    selection = _selection(config.get("selection"), errors)
    entries = _entries(config.get("entries"), errors)
    runs = _bounded_int(config, "runs", 1, MAX_RUNS, 3, errors)
    seed = _bounded_int(config, "seed", -_MAX_ID, _MAX_ID, secrets.randbits(32), errors)
    snapshot: dict[str, Any] = {}
    if selection is not None and "selection" not in errors:
        snapshot = _snapshot(selection)
        if not snapshot["examples"]:
            errors["selection"] = "every example's variation was dropped: nothing to evaluate"
        elif entries and "entries" not in errors:
            _rules(entries, snapshot, errors)
    fields = {
        "name": name.strip(),
        "selection": selection,
        "entries": [e.as_dict() for e in entries],
        "runs": runs,
        "seed": seed,
        "snapshot": snapshot,
    }
    return fields, errors


def items_total(entries: list[dict], runs: int, examples: int) -> int:
    """Chat entries answer every example each run; a translate engine at temperature 0 gives the
    same output every time, so it translates once (its sd over runs is 0 by construction)."""
    per_run = sum(runs if e["kind"] != TRANSLATE else 1 for e in entries)
    return per_run * examples
