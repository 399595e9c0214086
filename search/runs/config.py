"""A search run's configuration, validated from a form, the API or a JSON file (the run is
created by ``search.runs.services.start_search_run``).

One dictionary shape serves all three (see ``search/examples/*.json``)::

    {"name": "...", "tree": "<tree name or id>", "sampler": "corpus" | "llm" | "synthetic",
     "sampler_engine": "<chat engine>", "difficulty_engine": "<engine name>" | {engine spec},
     "src_lang": "en", "tgt_lang": "cs", "algorithm": "default", "params": {...},
     "budget_pulls": 3000, "budget_money": 5.0, "k": 10, "seed": 0, "batch_size": 32,
     "human_mode": "off" | "replace" | "calibrate", "human_settings": {...}}

A difficulty engine given as an object (``{"name", "kind", "params", ...}``) is created when
absent, so an example config runs on a fresh database; an existing engine of that name must
have the same kind and parameters.

Without ``batch_size`` (or with ``null``), the run's batch follows its budget and engines:
:func:`default_batch_size`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np

from engines.models import Engine
from engines.registry import resolve
from engines.services import build_engine
from rounds.refusal import JobConfigError
from search.bandit import POLICIES, make_policy
from search.bandit.base import Policy
from search.models import SearchRun, TextSample, Topic, TopicTree

__all__ = [
    "HUMAN_DEFAULTS",
    "HUMAN_RULES",
    "CheckedRun",
    "RunConfigError",
    "build_policy",
    "check_config",
    "config_errors",
    "default_batch_size",
    "engine_by_name",
    "engine_from_spec",
    "validate_config",
]

MAX_BATCH = 5000
# The default batch (issue 19): the bandit sees its results at least DEFAULT_ROUNDS times; a
# round sends at most WAVES requests per slot of its slowest remote engine (so it ends well
# within the task time limit and keeps every slot busy); never more than DEFAULT_BATCH_CAP.
DEFAULT_ROUNDS = 100
WAVES = 8
MIN_DEFAULT_BATCH = 10
DEFAULT_BATCH_CAP = 2000
MAX_COUNT = 2**31 - 1  # the largest PositiveIntegerField value on every database
MONEY_QUANTUM = Decimal("0.0001")  # SearchRun.budget_money keeps four decimals
MAX_MONEY = Decimal("99999999.9999")  # SearchRun.budget_money: 12 digits, 4 after the point
HUMAN_DEFAULTS: dict[str, Any] = {
    "rule": "top_k",  # send the samples of the current top-k topics; or "fraction", "boundary"
    "per_topic": 2,  # top_k: pulls per candidate topic at most; boundary: per topic a round
    "fraction": 0.1,  # fraction rule: share of each round's pulls sent
    "max_items": 100,  # pulls sent over the whole run at most
    "overlap": 1,  # annotators per item
    "timeout_hours": 72.0,  # how long a finished run waits for outstanding human scores
}
# top_k: texts of the current top-k topics; fraction: a random share of each round; boundary:
# texts of topics a human check could move across the top-k boundary (search.bandit.boundary).
HUMAN_RULES = ("top_k", "fraction", "boundary")
_KNOWN_KEYS = {
    "name", "tree", "sampler", "sampler_engine", "difficulty_engine", "src_lang", "tgt_lang",
    "algorithm", "params", "budget_pulls", "budget_money", "k", "seed", "batch_size",
    "human_mode", "human_settings", "description",
}  # fmt: skip


class RunConfigError(JobConfigError):
    """A search run configuration that cannot run."""


@dataclass
class CheckedRun:
    fields: dict[str, Any]
    errors: dict[str, str]
    policy: Policy | None = None  # built while checking the parameters, kept for the start


def config_errors(
    config: Any, known: set[str], job: str, refuse: type[JobConfigError]
) -> dict[str, str]:
    """Where every search job's configuration check starts: ``refuse`` anything but a JSON
    object; the errors so far (a key that is not ``known``)."""
    if not isinstance(config, dict):
        raise refuse({"config": f"a {job} configuration is a JSON object"})
    unknown = set(config) - known
    return {"config": f"unknown key(s): {', '.join(sorted(map(str, unknown)))}"} if unknown else {}


def _integer(value: Any, field: str, errors: dict, *, minimum: int, maximum: int = MAX_COUNT):
    if isinstance(value, bool) or not isinstance(value, int | str):
        errors[field] = "must be an integer"
        return None
    try:
        number = int(value)
    except ValueError:
        errors[field] = "must be an integer"
        return None
    if not minimum <= number <= maximum:
        errors[field] = f"must be between {minimum} and {maximum}"
        return None
    return number


def _number(value: Any, *, minimum: float, maximum: float) -> float | None:
    """``value`` as a finite float within bounds, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if minimum <= number <= maximum else None


def _engine(value: Any, field: str, capability: str, errors: dict) -> Engine | None:
    if isinstance(value, dict):
        return engine_from_spec(value, field, errors)
    return engine_by_name(value, field, capability, errors)


def engine_by_name(value: Any, field: str, capability: str, errors: dict) -> Engine | None:
    """The enabled engine named ``value`` with ``capability``; else None and ``errors[field]``
    says why (a search run's and a breaker run's configuration refuse in these words)."""
    engine = Engine.objects.filter(name=str(value or "")).first()
    if engine is None:
        errors[field] = f"there is no engine named {value!r}"
    elif not engine.enabled:
        errors[field] = f"engine {engine.name} is disabled"
    elif not engine.has_capability(capability):
        errors[field] = f"engine {engine.name} has no {capability!r} capability"
    else:
        return engine
    return None


def engine_from_spec(spec: dict, field: str, errors: dict) -> Engine | None:
    """The engine an inline spec describes: the existing one of its name when its kind and
    parameters match, else a new one, validated and unsaved; None and ``errors[field]``
    otherwise."""
    existing = Engine.objects.filter(name=spec.get("name", "")).first()
    if existing is not None:
        if existing.kind != spec.get("kind") or existing.params != spec.get("params", {}):
            errors[field] = f"an engine named {existing.name!r} exists with other settings"
            return None
        return existing
    try:
        return build_engine(spec)  # validated, saved only by the start: checking writes nothing
    except Exception as exc:  # build_engine raises ValidationError with readable messages
        errors[field] = f"cannot create engine: {exc}"
        return None


def _tree(value: Any, errors: dict) -> TopicTree | None:
    by_id = re.fullmatch(r"[0-9]{1,18}", str(value))
    lookup: dict[str, Any] = {"pk": int(value)} if by_id else {"name": str(value)}
    tree = TopicTree.objects.filter(**lookup).first()
    if tree is None:
        errors["tree"] = f"there is no topic tree {value!r}"
    elif tree.status != TopicTree.Status.READY or tree.n_leaves == 0:
        errors["tree"] = f"topic tree {tree.name!r} is not ready"
    else:
        return tree
    return None


def _check_engines(config: dict, checked: CheckedRun) -> None:
    errors, fields = checked.errors, checked.fields
    fields["difficulty_engine"] = _engine(
        config.get("difficulty_engine"), "difficulty_engine", "difficulty", errors
    )
    sampler = config.get("sampler", "corpus")
    if sampler not in SearchRun.Sampler.values:
        errors["sampler"] = f"must be one of {', '.join(SearchRun.Sampler.values)}"
        return
    fields["sampler"] = sampler
    if sampler == SearchRun.Sampler.LLM:
        fields["sampler_engine"] = _engine(
            config.get("sampler_engine"), "sampler_engine", "chat", errors
        )
    engine = fields["difficulty_engine"]
    if engine and (sampler == SearchRun.Sampler.SYNTHETIC) != (
        engine.kind == Engine.Kind.SYNTHETIC
    ):
        errors["sampler"] = "the synthetic sampler goes with a synthetic difficulty engine only"


def _check_topics(config: dict, checked: CheckedRun) -> None:
    errors, fields = checked.errors, checked.fields
    sampler, engine = fields.get("sampler"), fields.get("difficulty_engine")
    if sampler == SearchRun.Sampler.SYNTHETIC:
        if engine is not None:
            fields["n_topics"] = resolve(engine, "world").n_topics
        return
    if config.get("tree") in (None, ""):
        errors["tree"] = "a topic tree is required"
        return
    tree = _tree(config["tree"], errors)
    if tree is None:
        return
    fields["tree"], fields["n_topics"] = tree, tree.n_leaves
    if sampler == SearchRun.Sampler.CORPUS:
        empty = (
            Topic.objects.filter(tree=tree, arm__isnull=False)
            .exclude(pk__in=TextSample.objects.filter(topic__tree=tree).values("topic_id"))
            .values_list("path", flat=True)
        )
        count = empty.count()
        if count:
            errors["sampler"] = (
                f"{count} leaf topic(s) of {tree.name!r} have no samples (e.g. {empty[0]!r}); "
                "import a corpus that covers them or draw samples with a chat engine"
            )


def _check_budget(config: dict, checked: CheckedRun) -> None:
    errors, fields = checked.errors, checked.fields
    money = config.get("budget_money")
    if money not in (None, ""):
        try:
            amount = Decimal(str(money)).quantize(MONEY_QUANTUM)
            if not amount.is_finite() or not 0 < amount <= MAX_MONEY:
                raise InvalidOperation
            fields["budget_money"] = amount
        except InvalidOperation:
            errors["budget_money"] = (
                f"must be an amount of at least {MONEY_QUANTUM} and at most {MAX_MONEY}"
            )
    pulls = config.get("budget_pulls")
    n_topics = fields.get("n_topics") or 0
    if pulls in (None, "") and fields.get("budget_money") and n_topics:
        pulls = 3 * n_topics  # a money budget still needs a planning horizon
    if pulls in (None, ""):
        errors["budget_pulls"] = "a budget in pulls (or in money) is required"
    else:
        fields["budget_pulls"] = _integer(pulls, "budget_pulls", errors, minimum=1)
    fields["k"] = _integer(config.get("k", 10), "k", errors, minimum=1)
    if fields["k"] and n_topics and fields["k"] > n_topics:
        errors["k"] = f"must be at most the number of topics ({n_topics})"
    batch = config.get("batch_size")
    if batch in (None, ""):
        if fields.get("budget_pulls"):
            fields["batch_size"] = default_batch_size(
                fields["budget_pulls"], _concurrency(fields.get("difficulty_engine"),
                fields.get("sampler_engine"))
            )  # fmt: skip
    else:
        fields["batch_size"] = _integer(batch, "batch_size", errors, minimum=1, maximum=MAX_BATCH)
    fields["seed"] = _integer(config.get("seed", 0), "seed", errors, minimum=0, maximum=2**62)


def default_batch_size(budget_pulls: int, concurrency: int | None) -> int:
    """Pulls per round when the config names none: ``budget / DEFAULT_ROUNDS`` (at least
    MIN_DEFAULT_BATCH), for remote engines at most ``WAVES × concurrency`` and a multiple of
    ``concurrency`` (the smallest ``max_concurrency`` among them; None when the run calls no
    remote engine), never above the budget or DEFAULT_BATCH_CAP.

    A round's bookkeeping costs about the same whatever its size, so small batches waste it
    (issue 19: 5 ms per pull at the old fixed 10); very large ones make the bandit adapt less
    often and a round outlast its task.
    """
    batch = max(MIN_DEFAULT_BATCH, -(-budget_pulls // DEFAULT_ROUNDS))
    if concurrency is not None:
        batch = min(batch, WAVES * concurrency)
        batch = max(concurrency, batch // concurrency * concurrency)
    return max(1, min(batch, budget_pulls, DEFAULT_BATCH_CAP))


def _concurrency(*engines: Engine | None) -> int | None:
    """The smallest ``max_concurrency`` of the remote engines a run calls (crowd members
    included), None when it calls none."""
    called: list[Engine] = []
    for engine in engines:
        if engine is None:
            continue
        if engine.kind == Engine.Kind.ARTIFICIAL_CROWD:
            names = [*engine.params.get("translators", []),
                     *engine.params.get("quality_estimators", [])]  # fmt: skip
            called.extend(Engine.objects.filter(name__in=names))
        else:
            called.append(engine)
    limits = [engine.max_concurrency for engine in called if engine.is_remote]
    return min(limits) if limits else None


def _check_human(config: dict, checked: CheckedRun) -> None:
    errors, fields = checked.errors, checked.fields
    mode = config.get("human_mode", "off") or "off"
    if mode not in SearchRun.HumanMode.values:
        errors["human_mode"] = f"must be one of {', '.join(SearchRun.HumanMode.values)}"
        return
    fields["human_mode"] = mode
    given = config.get("human_settings") or {}
    if not isinstance(given, dict):
        errors["human_settings"] = "must be an object"
        return
    unknown = set(given) - set(HUMAN_DEFAULTS)
    if unknown:
        errors["human_settings"] = f"unknown setting(s): {', '.join(sorted(unknown))}"
        return
    merged = {**HUMAN_DEFAULTS, **given}
    problem = _human_settings_problem(merged)
    if problem:
        errors["human_settings"] = problem
    fields["human_settings"] = merged
    engine = fields.get("difficulty_engine")
    if mode != "off" and engine is not None and engine.kind != Engine.Kind.ARTIFICIAL_CROWD:
        errors["human_mode"] = (
            "humans score translations, so this mode needs an artificial-crowd difficulty "
            "engine (its translators produce what annotators see)"
        )
    if mode != "off" and not (config.get("tgt_lang") or "").strip():
        errors["tgt_lang"] = "the target language is required when humans score translations"


def _human_settings_problem(merged: dict[str, Any]) -> str | None:
    if merged["rule"] not in HUMAN_RULES:
        return f"rule must be one of {', '.join(map(repr, HUMAN_RULES))}"
    fraction = _number(merged["fraction"], minimum=0, maximum=1)
    if not fraction:
        return "fraction must be in (0, 1]"
    for key in ("per_topic", "max_items", "overlap"):
        if _integer(merged[key], key, {}, minimum=1) is None:
            return f"{key} must be an integer between 1 and {MAX_COUNT}"
    if not _number(merged["timeout_hours"], minimum=0, maximum=24 * 366):
        return "timeout_hours must be a number of hours in (0, 8784]"
    return None


def _check_policy(config: dict, checked: CheckedRun) -> None:
    errors, fields = checked.errors, checked.fields
    algorithm = config.get("algorithm", "default") or "default"
    params = config.get("params") or {}
    if not isinstance(algorithm, str):
        errors["algorithm"] = '"default" or the name of a method, as a string'
        return
    if algorithm != "default" and algorithm not in POLICIES:
        known = ", ".join(sorted([*POLICIES, "default"]))
        errors["algorithm"] = f"unknown algorithm {algorithm!r}; known: {known}"
        return
    if not isinstance(params, dict):
        errors["params"] = "must be an object"
        return
    fields["algorithm"], fields["params"] = algorithm, params
    if algorithm == "contextual" and fields.get("sampler") == SearchRun.Sampler.SYNTHETIC:
        errors["algorithm"] = "the contextual method needs a topic tree (keywords)"
    if errors:
        return
    try:
        checked.policy = build_policy(SearchRun(**_model_fields(fields)))
    except (TypeError, ValueError, OverflowError) as exc:
        errors["params"] = f"the {algorithm} method refuses these parameters: {exc}"


def _model_fields(fields: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in SearchRun._meta.get_fields()}
    return {key: value for key, value in fields.items() if key in names}


def validate_config(config: Any) -> dict[str, Any]:
    """Model fields for a new run, or :class:`RunConfigError` listing every problem."""
    return check_config(config).fields


def check_config(config: Any) -> CheckedRun:
    """The run's model fields and its initial bandit policy, or :class:`RunConfigError`
    listing every problem; inline engines are built, not saved."""
    errors = config_errors(config, _KNOWN_KEYS, "run", RunConfigError)
    checked = CheckedRun(fields={}, errors=errors)
    name = str(config.get("name") or "").strip()
    if not name:
        checked.errors["name"] = "a run needs a name"
    checked.fields.update(
        name=name[:200],
        src_lang=str(config.get("src_lang") or "en").strip()[:16],
        tgt_lang=str(config.get("tgt_lang") or "").strip()[:16],
    )
    for check in (_check_engines, _check_topics, _check_budget, _check_human, _check_policy):
        check(config, checked)
    if checked.errors:
        raise RunConfigError(checked.errors)
    checked.fields = _model_fields(checked.fields)
    return checked


def build_policy(run: SearchRun):
    """A fresh bandit policy for ``run`` (seeded; contextual gets the tree's keywords)."""
    params = dict(run.params)
    if run.algorithm == "contextual" and run.tree_id:
        keywords = list(
            Topic.objects.filter(tree_id=run.tree_id, arm__isnull=False)
            .order_by("arm")
            .values_list("keywords", flat=True)
        )
        params.setdefault("keywords", keywords)
    rng = np.random.default_rng(run.seed)
    return make_policy(
        run.algorithm, run.n_topics, min(run.k, run.n_topics), rng, budget=run.budget_pulls,
        **params,
    )  # fmt: skip
