"""A breaker run's configuration, validated from a form, the API or a JSON file (runs are
created by ``search.breaker.services.start_breaker_run`` and ``start_breaker_comparison``).

One dictionary shape serves all three (see ``search/examples/breaker_*.json``)::

    {"name": "...", "method": "breaker_seeded" | ... (or "methods": [...] to compare),
     "llm": "<chat engine>", "targets": ["<translator>", ...], "qe": ["<QE engine>", ...],
     "src_lang": "en", "tgt_lang": "cs", "n_steps": 10, "k_generations": 10,
     "max_edit_share": 0.75, "seeds": {seed spec, see search.breaker.seeds},
     "n_items": 20, "target_words": 30, "seed": 0, "budget_money": 5.0,
     "max_parse_attempts": 3, "history_batch": 5}

Engines are named, or described inline (``{"name", "kind", ...}``: created when absent, an
existing one of that name must match). Methods with seeds need ``seeds``; seedless and
zero-shot methods take the item count and the target length from the seeds when given (the
mean word count of the set), else from ``n_items`` and ``target_words``.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from engines.models import Engine
from rounds.refusal import JobConfigError
from search.breaker.methods import METHODS, spec, steps_per_chain
from search.breaker.parsing import word_count
from search.breaker.seeds import Seed, SeedError, load_seeds
from search.models import BreakerRun
from search.runs.config import config_errors, engine_by_name, engine_from_spec

__all__ = [
    "BreakerConfigError",
    "CheckedRun",
    "budget_amount",
    "check_comparison",
    "check_run",
    "named_engines",
    "validate_config",
]

MAX_ITEMS = 2000
# Digits only (str.isdigit() also accepts "²", which int() refuses), and short enough to parse.
_INTEGER_TEXT = re.compile(r"-?[0-9]{1,20}")
_KNOWN = {
    "name", "method", "methods", "llm", "targets", "target", "qe", "src_lang", "tgt_lang",
    "n_steps", "k_generations", "max_edit_share", "seeds", "n_items", "target_words", "seed",
    "budget_money", "max_parse_attempts", "history_batch", "comparison", "description",
}  # fmt: skip


class BreakerConfigError(JobConfigError):
    """A run or transfer configuration that cannot run."""


def _engine(value: Any, field: str, capability: str, errors: dict) -> Engine | None:
    if isinstance(value, dict):
        engine = engine_from_spec(value, field, errors)
        if engine is None or engine.pk is None:  # refused, or new (saved by the start)
            return engine
        value = engine.name  # an existing engine must also be enabled and capable
    return engine_by_name(value, field, capability, errors)


def named_engines(value: Any, field: str, capability: str, errors: dict) -> list[Engine]:
    """The engines ``value`` lists (names or inline specs); problems go to ``errors[field]``."""
    items = value if isinstance(value, list) else [value] if value else []
    if not items:
        errors[field] = "name at least one engine"
        return []
    found = [_engine(item, field, capability, errors) for item in items]
    names = [e.name for e in found if e]
    if len(set(names)) != len(names):
        errors[field] = "an engine is listed twice"
    return [e for e in found if e]


def _integer(config: dict, key: str, default: int, low: int, high: int, errors: dict) -> int:
    value = config.get(key, default)
    if value in (None, ""):
        return default
    if isinstance(value, str) and _INTEGER_TEXT.fullmatch(value.strip()):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        errors[key] = "must be an integer"
        return default
    if not low <= value <= high:
        errors[key] = f"must be between {low} and {high}"
        return default
    return value


MAX_BUDGET = Decimal("99999999")  # what budget_money's 12 digits with 4 decimals hold


def budget_amount(value: Any, errors: dict) -> Decimal | None:
    """A money budget (None when not given); a bad one goes to ``errors["budget_money"]``."""
    if value in (None, ""):
        return None
    try:
        amount = Decimal(str(value))
        if not amount.is_finite() or amount <= 0 or amount > MAX_BUDGET:
            raise InvalidOperation
        return amount.quantize(Decimal("0.0001"))
    except InvalidOperation:
        errors["budget_money"] = f"must be a positive amount up to {MAX_BUDGET}"
        return None


# A run's model fields, its items (seeds, or empty slots) and its engines (inline ones unsaved).
CheckedRun = tuple[dict[str, Any], list[Seed], list[Engine]]


def check_run(config: Any, method: str) -> CheckedRun:
    """What a new run of ``method`` is made of, or :class:`BreakerConfigError` listing every
    problem; nothing is written."""
    errors = config_errors(config, _KNOWN, "run", BreakerConfigError)
    known = isinstance(method, str) and method in METHODS
    if not known:
        errors["method"] = f"must be one of {', '.join(METHODS)}"
    # An unknown method is checked as MT-breaker (seeded), so every other problem shows too.
    method_spec = spec(method if known else "breaker_seeded")
    name = str(config.get("name") or "").strip()
    if not name:
        errors["name"] = "a run needs a name"
    tgt = str(config.get("tgt_lang") or "").strip()
    if not tgt:
        errors["tgt_lang"] = "the target language is required"
    fields: dict[str, Any] = {
        "name": name[:200],
        "method": method,
        "comparison": str(config.get("comparison") or "")[:200],
        "src_lang": str(config.get("src_lang") or "en").strip()[:16],
        "tgt_lang": tgt[:16],
        "n_steps": _integer(config, "n_steps", 10, 1, 100, errors),
        "k_generations": _integer(config, "k_generations", 10, 1, 100, errors),
        "seed": _integer(config, "seed", 0, 0, 2**62, errors),
        "max_parse_attempts": _integer(config, "max_parse_attempts", 3, 1, 10, errors),
        "history_batch": _integer(config, "history_batch", 5, 1, 1000, errors),
    }
    share = config.get("max_edit_share", 0.75)
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 1:
        errors["max_edit_share"] = "must be a number in (0, 1]"
    else:
        fields["max_edit_share"] = float(share)
    money = budget_amount(config.get("budget_money"), errors)
    if money is not None:
        fields["budget_money"] = money
    engines: list[Engine] = []
    if method_spec.uses_llm:
        llm = _engine(config.get("llm"), "llm", "chat", errors)
        fields["llm_engine"] = llm
        engines += [llm] if llm else []
    targets = named_engines(
        config.get("targets") or config.get("target"), "targets", "translate", errors
    )
    qe = named_engines(config.get("qe"), "qe", "quality", errors)
    fields["targets"], fields["qe_engines"] = [e.name for e in targets], [e.name for e in qe]
    engines += targets + qe
    seeds = _seeds(config, method_spec.seeded, fields, errors)
    if errors:
        raise BreakerConfigError(errors)
    fields["steps_total"] = len(seeds) * steps_per_chain(
        method, fields["n_steps"], fields["k_generations"]
    )
    return fields, seeds, engines


def _seeds(config: dict, seeded: bool, fields: dict, errors: dict) -> list[Seed]:
    """The run's items: its seeds, or empty slots for seedless and zero-shot methods."""
    seeds: list[Seed] = []
    if config.get("seeds") not in (None, "", {}):
        try:
            seeds = load_seeds(config["seeds"])
        except SeedError as exc:
            errors["seeds"] = str(exc)
            return []
        fields["seeds_from"] = _stored_spec(config["seeds"])
    elif seeded:
        errors["seeds"] = "this method starts from seeds: give a seed source"
        return []
    if seeds:
        mean = sum(word_count(s.text) for s in seeds) / len(seeds)
        fields["target_words"] = max(1, math.ceil(mean - 0.5))
    if config.get("target_words") not in (None, ""):
        fields["target_words"] = _integer(config, "target_words", 30, 1, 1000, errors)
    fields.setdefault("target_words", 30)
    n_items = _integer(config, "n_items", len(seeds) or 10, 1, MAX_ITEMS, errors)
    if seeded:
        return seeds[:MAX_ITEMS]
    # Seedless: one empty item per seed (or n_items); the seeds only set the length.
    return [Seed("", {}) for _ in range(n_items)]


def _stored_spec(spec_value: dict) -> dict:
    """The seed spec as stored on the run: an uploaded file's content is not kept twice."""
    stored = {k: v for k, v in spec_value.items() if k != "lines"}
    if "lines" in spec_value:
        stored["lines_stored_on_chains"] = True
    return stored


def validate_config(config: Any) -> dict[str, Any]:
    """Model fields for a new run, or :class:`BreakerConfigError` listing every problem."""
    method = config.get("method", "") if isinstance(config, dict) else ""
    return check_run(config, method)[0]


def _check_comparison_name(comparison: Any, field: str) -> None:
    """A comparison is its runs sharing one name: a second one under the same name would mix its
    runs into the first's page, Table 2 and campaigns."""
    first = BreakerRun.objects.filter(comparison=str(comparison)).order_by("pk").first()
    if first is not None:
        message = f"a comparison named {comparison!r} already exists (from run #{first.pk})"
        raise BreakerConfigError({field: f"{message}; choose another name"})


def check_comparison(config: Any) -> list[CheckedRun]:
    """One run per method of ``config["methods"]`` on the same seeds ("compare methods"), or
    :class:`BreakerConfigError` listing every method's problems; nothing is written."""
    methods = config.get("methods") if isinstance(config, dict) else None
    if not isinstance(methods, list) or not methods:
        raise BreakerConfigError({"methods": "choose at least one method"})
    base = {k: v for k, v in config.items() if k not in ("methods", "method")}
    base["comparison"] = base.get("comparison") or base.get("name") or "comparison"
    _check_comparison_name(base["comparison"], "comparison" if config.get("comparison") else "name")
    checked, errors = [], {}
    for method in methods:
        if not isinstance(method, str) or method not in METHODS:
            errors[str(method)] = f"unknown method; known: {', '.join(METHODS)}"
            continue
        try:
            named = {**base, "name": f"{base.get('name', '')} · {METHODS[method].label}"}
            checked.append(check_run(named, method))
        except BreakerConfigError as exc:
            errors[method] = str(exc.errors)
    if errors:
        raise BreakerConfigError(errors)
    return checked
