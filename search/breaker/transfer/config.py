"""A transfer's configuration (seed 001 §3.3–3.5): validated from a form, the API or a JSON file
(the transfer is created by ``search.breaker.transfer.services.start_transfer``). One
dictionary shape serves all three::

    {"name": "...", "runs": [12, 13] (or "comparison": "<label>"),
     "translators": ["<translator>", ...], "languages": ["cs", "de", ...],
     "qe": ["<QE engine>", ...], "budget_money": 5.0}

Runs must be over (finished, cancelled or failed) and between them have at least one selected
text; engines are named or described inline like a run's (created with the transfer). Every problem
is reported at once, keyed by field, and nothing is written.
"""

from __future__ import annotations

import re
from typing import Any

from engines.models import Engine
from search.breaker.config import BreakerConfigError, budget_amount, named_engines
from search.models import BreakerChain, BreakerRun
from search.runs.config import config_errors

__all__ = ["validate_transfer"]

MAX_RUNS = 50
MAX_ENGINES = 20
MAX_LANGUAGES = 20
MAX_RESULTS = 200_000
_KNOWN = {"name", "runs", "comparison", "translators", "languages", "qe", "budget_money"}
# A BCP-47-like code: "cs", "de", "zh-Hans", "pt-BR".
_LANGUAGE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
_MAX_ID = 2**63 - 1


def _runs(config: dict, errors: dict) -> list[BreakerRun]:
    comparison = str(config.get("comparison") or "").strip()
    ids = config.get("runs")
    if ids in (None, "", []) and comparison:
        runs = list(BreakerRun.objects.filter(comparison=comparison).order_by("pk"))
        if not runs:
            errors["comparison"] = f"there is no comparison named {comparison!r}"
        return runs
    if not isinstance(ids, list) or not ids:
        errors["runs"] = "name at least one breaker run (or a comparison)"
        return []
    if len(ids) > MAX_RUNS:
        errors["runs"] = f"at most {MAX_RUNS} runs"
        return []
    if any(isinstance(i, bool) or not isinstance(i, int) or not 0 < i <= _MAX_ID for i in ids):
        errors["runs"] = "runs are given by their ids (positive integers)"
        return []
    if len(set(ids)) != len(ids):
        errors["runs"] = "a run is listed twice"
        return []
    found = BreakerRun.objects.in_bulk(ids)
    missing = [i for i in ids if i not in found]
    if missing:
        errors["runs"] = f"there is no breaker run {', '.join(f'#{i}' for i in missing)}"
        return []
    return [found[i] for i in ids]


def _check_runs(runs: list[BreakerRun], field: str, errors: dict) -> int:
    """The number of selected texts the runs have between them (0 when they cannot be used)."""
    running = [f"#{r.pk}" for r in runs if not r.is_finished]
    if running:
        errors[field] = f"run(s) {', '.join(running)} are not over yet; transfer them when done"
        return 0
    texts = BreakerChain.objects.filter(run__in=runs).exclude(selected_text="").count()
    if runs and not texts:
        errors[field] = "the runs have no selected texts"
    return texts


def _languages(value: Any, errors: dict) -> list[str]:
    if not isinstance(value, list) or not value:
        errors["languages"] = "name at least one target language"
        return []
    codes = [str(v).strip() for v in value]
    bad = [c for c in codes if not _LANGUAGE.match(c) or len(c) > 16]
    if bad:
        errors["languages"] = f"not a language code: {', '.join(repr(c[:20]) for c in bad[:5])}"
    elif len(codes) > MAX_LANGUAGES:
        errors["languages"] = f"at most {MAX_LANGUAGES} languages"
    elif len(set(codes)) != len(codes):
        errors["languages"] = "a language is listed twice"
    return codes


def _engines(config: dict, key: str, capability: str, errors: dict) -> list[Engine]:
    """Named engines, or inline specs (created with the transfer when absent)."""
    value = config.get(key)
    if isinstance(value, list) and len(value) > MAX_ENGINES:
        errors[key] = f"at most {MAX_ENGINES} engines"
        return []
    return named_engines(value, key, capability, errors)


def validate_transfer(config: Any) -> tuple[dict[str, Any], list[BreakerRun], list[Engine]]:
    """Model fields, runs and engines (inline ones not saved yet) for a new transfer, or
    :class:`BreakerConfigError` listing every problem."""
    errors = config_errors(config, _KNOWN, "transfer", BreakerConfigError)
    name = str(config.get("name") or "").strip()
    if not name:
        errors["name"] = "a transfer needs a name"
    runs = _runs(config, errors)
    texts = _check_runs(runs, "runs" if config.get("runs") else "comparison", errors)
    engines = _engines(config, "translators", "translate", errors)
    qe = _engines(config, "qe", "quality", errors)
    fields: dict[str, Any] = {
        "name": name[:200],
        "translators": [e.name for e in engines],
        "languages": _languages(config.get("languages"), errors),
        "qe_engines": [e.name for e in qe],
        "budget_money": budget_amount(config.get("budget_money"), errors),
    }
    total = texts * len(fields["translators"]) * len(fields["languages"])
    if total > MAX_RESULTS and "languages" not in errors:
        errors["languages"] = (
            f"{texts} texts × {len(fields['translators'])} translators × "
            f"{len(fields['languages'])} languages = {total} translations; at most {MAX_RESULTS}"
        )
    if errors:
        raise BreakerConfigError(errors)
    fields["items_total"] = total
    return fields, runs, engines + qe
