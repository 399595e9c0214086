"""Rule jobs (seed 004 §3): create them, run them in rounds on the round kernel, cancel them.

One job per generator engine. A round (:func:`advance_job`):

1. claim the job with a lease (a conditional UPDATE on status, round index and lease);
2. take the next ``LEXICAL_RULES_ROUND_CONCEPTS`` pending concepts, ask the engine for each
   one's rules (all concepts of the round at once, concurrent within the engine's limit), read
   every answer strictly (``lexical.rules.prompts``) and re-ask those that do not fit, saying
   what was wrong, at most ``max_reasks`` times; a concept still without usable rules gets its
   error and the job goes on — engine calls outside any transaction, through the engines call
   path (cached, booked in the ledger under the job's scope);
3. in one transaction guarded by the claim: write the rules and each concept's outcome, the
   counters and the cost, advance the round index, release the claim, finish when no concept
   is pending.

A worker killed in 1–2 leaves nothing written; the round is re-run (redelivery, or the shared
sweep once the lease expired) and answered from the cache, and ``lexical_rule_per_job`` keeps
any rule from being written twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

import rounds
from engines.interfaces import ENGINE_ERRORS
from engines.models import Engine
from engines.registry import resolve
from engines.selectors import cost_of_scope
from lexical.models import Concept, ExampleSelection, MiningJob, Rule, RuleJob, RuleJobConcept
from lexical.models.rules import DEFAULT_RULE_PARAMS
from lexical.rules.prompts import (
    RuleAnswerError,
    RulePrompt,
    parse_rules,
    reask_message,
    rule_messages,
)
from lexical.rules.selectors import rule_prompt

__all__ = [
    "ADVANCE_TASK",
    "JobStateError",
    "RuleConfigError",
    "advance_job",
    "cancel_job",
    "enqueue_round",
    "recover_jobs",
    "run_in_foreground",
    "start_rule_jobs",
]

ADVANCE_TASK = "lexical.advance_rule_job"
Status = rounds.Status
MAX_CONCEPTS = 10_000
# How much of a refused answer is kept (on the outcome row, and echoed back in a re-ask).
ANSWER_KEPT_CHARS = 4000
PARAM_BOUNDS = {
    "sentences_per_variation": (1, 500),
    "max_sentence_tokens": (2, 1000),
    "max_reasks": (0, 5),
}


class RuleConfigError(rounds.JobConfigError):
    """The job's settings are refused."""


class JobStateError(RuntimeError):
    """The job is not in a state that allows the action."""


def _round_concepts() -> int:
    return int(settings.LEXICAL_RULES_ROUND_CONCEPTS)


def enqueue_round(job_id: int, round_index: int, *, countdown: float | None = None) -> None:
    """Queue round ``round_index`` of a job once the current transaction commits."""
    rounds.enqueue(
        ADVANCE_TASK, (job_id, round_index), queue=settings.CELERY_SLOW_QUEUE, countdown=countdown
    )


# --- configuration ----------------------------------------------------------------------------


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _id(value: Any) -> bool:
    """A value a primary-key lookup can take (a bigger one overflows the database's integer)."""
    return _int(value) and 0 < value < 2**63


def _params(raw: Any, errors: dict[str, str]) -> dict:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        errors["params"] = "must be an object"
        return {}
    params = dict(DEFAULT_RULE_PARAMS)
    unknown = sorted(set(raw) - set(DEFAULT_RULE_PARAMS))
    if unknown:
        errors["params"] = f"unknown parameter(s) {', '.join(map(repr, unknown))}"
    for key, (low, high) in PARAM_BOUNDS.items():
        if key in raw:
            if not (_int(raw[key]) and low <= raw[key] <= high):
                errors[key] = f"must be an integer from {low} to {high}"
            else:
                params[key] = raw[key]
    if "system_prompt_in_user" in raw:
        if not isinstance(raw["system_prompt_in_user"], bool):
            errors["system_prompt_in_user"] = "must be true or false"
        else:
            params["system_prompt_in_user"] = raw["system_prompt_in_user"]
    return params


def _engines(raw: Any, errors: dict[str, str]) -> list[str]:
    if not (isinstance(raw, list) and raw and all(isinstance(n, str) and n for n in raw)):
        errors["engines"] = "a non-empty list of chat engine names"
        return []
    if len(set(raw)) != len(raw):
        errors["engines"] = "an engine is named twice"
        return []
    found = {e.name: e for e in Engine.objects.filter(name__in=raw)}
    problems = []
    for name in raw:
        engine = found.get(name)
        if engine is None:
            problems.append(f"{name[:100]!r}: there is no engine with that name")
        elif not engine.enabled:
            problems.append(f"{name}: the engine is disabled")
        elif not engine.has_capability("chat"):
            problems.append(f"{name}: the engine is not configured as a chat model")
    if problems:
        errors["engines"] = "; ".join(problems)
    return list(raw)


def _concepts(config: dict, errors: dict[str, str]) -> tuple[str, Any, list[Concept]]:
    """(source, source row, concepts) from exactly one of mining_job / selection / concepts."""
    given = [key for key in ("mining_job", "selection", "concepts") if config.get(key) is not None]
    if len(given) != 1:
        errors["source"] = "give exactly one of mining_job, selection or concepts"
        return "", None, []
    key = given[0]
    value = config[key]
    if key == "concepts":
        if (
            not (isinstance(value, list) and value and all(_id(v) for v in value))
            or len(value) > MAX_CONCEPTS
        ):
            errors["concepts"] = f"a list of 1 to {MAX_CONCEPTS} concept ids"
            return key, None, []
        ids = list(dict.fromkeys(value))
        found = {c.pk: c for c in Concept.objects.filter(pk__in=ids)}
        missing = [i for i in ids if i not in found]
        if missing:
            errors["concepts"] = f"no concept with id {', '.join(map(str, missing[:10]))}"
            return key, None, []
        return key, None, [found[i] for i in ids]
    if not _id(value):
        errors[key] = "must be an id"
        return key, None, []
    model = MiningJob if key == "mining_job" else ExampleSelection
    row = model.objects.filter(pk=value).first()
    if row is None:
        errors[key] = f"there is no {'mining job' if key == 'mining_job' else 'selection'} {value}"
        return key, None, []
    active = Concept.objects.filter(status=Concept.Status.ACTIVE).order_by("lemma", "pos", "id")
    if key == "mining_job":
        concepts = list(active.filter(mining_job_id=row.pk))
    else:
        concepts = list(active.filter(selections__id=row.pk))
    if not concepts:
        errors[key] = f"{row} has no active concepts"
    return key, row, concepts


def start_rule_jobs(config: Any, *, created_by=None, enqueue: bool = True) -> list[RuleJob]:
    """One queued job per engine of ``config``; nothing is written if anything is refused.

    ``config``: ``{"engines": [names], one of "mining_job": id | "selection": id |
    "concepts": [ids], "params": {sentences_per_variation, max_sentence_tokens, max_reasks,
    system_prompt_in_user}}``.
    """
    if not isinstance(config, dict):
        raise RuleConfigError({"config": "must be a JSON object"})
    errors: dict[str, str] = {}
    unknown = sorted(set(config) - {"engines", "mining_job", "selection", "concepts", "params"})
    if unknown:
        errors["config"] = f"unknown field(s) {', '.join(map(repr, unknown))}"
    engines = _engines(config.get("engines"), errors)
    params = _params(config.get("params"), errors)
    source, row, concepts = _concepts(config, errors)
    if errors:
        raise RuleConfigError(errors)
    jobs = []
    with transaction.atomic():
        for name in engines:
            job = RuleJob.objects.create(
                source=source,
                mining_job=row if source == "mining_job" else None,
                selection=row if source == "selection" else None,
                engine=name,
                params=params,
                items_total=len(concepts),
                created_by=created_by if getattr(created_by, "pk", None) else None,
            )
            RuleJobConcept.objects.bulk_create(
                RuleJobConcept(job=job, concept=c, position=i) for i, c in enumerate(concepts)
            )
            if enqueue:
                enqueue_round(job.pk, 0)
            jobs.append(job)
    return jobs


# --- rounds -----------------------------------------------------------------------------------


@dataclass
class Work:
    """One concept of the round: its conversation and what came of it."""

    outcome_id: int
    concept_id: int
    prompt: RulePrompt
    variation_ids: dict[str, int]
    messages: list[dict] = field(default_factory=list)
    attempts: int = 0
    last_answer: str = ""
    rules: dict[str, str] | None = None
    error: str = ""


def _prepare(job: RuleJob, outcomes: list[RuleJobConcept]) -> list[Work]:
    work = []
    for outcome in outcomes:
        prompt, ids = rule_prompt(outcome.concept, job.params)
        item = Work(outcome.pk, outcome.concept_id, prompt, ids)
        if not prompt.variations:
            item.error = "the concept has no variations left to describe (all were dropped)"
        else:
            item.messages = rule_messages(
                prompt, system_prompt_in_user=bool(job.params.get("system_prompt_in_user"))
            )
        work.append(item)
    return work


def _ask(job: RuleJob, work: list[Work]) -> None:
    """Ask, read, re-ask what did not fit (bounded); sets each item's rules or error."""
    chat = resolve(job.engine, "chat", scope=job.scope)
    max_reasks = int(job.params.get("max_reasks", DEFAULT_RULE_PARAMS["max_reasks"]))
    asking = [item for item in work if item.messages]
    for attempt in range(max_reasks + 1):
        if not asking:
            return
        completions = chat.complete_many([item.messages for item in asking])
        again = []
        for item, completion in zip(asking, completions, strict=True):
            item.attempts += 1
            item.last_answer = completion.text[:ANSWER_KEPT_CHARS]
            try:
                item.rules = parse_rules(completion.text, item.prompt)
                item.error = ""
            except RuleAnswerError as exc:
                item.error = str(exc)
                if attempt < max_reasks:
                    item.messages = [
                        *item.messages,
                        {"role": "assistant", "content": item.last_answer},
                        reask_message(item.prompt, item.error),
                    ]
                    again.append(item)
        asking = again
    for item in work:
        if item.rules is None and item.attempts:
            item.error = f"no usable rules after {item.attempts} answer(s); the last: {item.error}"


def _ask_pending(job_id: int, worker: str) -> list[Work]:
    """The round's pending concepts, asked for their rules (engine calls, no transaction)."""
    job = RuleJob.objects.get(pk=job_id)
    pending = list(
        job.job_concepts.filter(status=RuleJobConcept.Status.PENDING)
        .select_related("concept")
        .order_by("position")[: _round_concepts()]
    )
    work = _prepare(job, pending)
    _ask(job, work)
    return work


def _write(job: RuleJob, work: list[Work]) -> None:
    now = timezone.now()
    rules = []
    for item in work:
        ok = item.rules is not None
        updated = RuleJobConcept.objects.filter(
            pk=item.outcome_id, status=RuleJobConcept.Status.PENDING
        ).update(
            status=RuleJobConcept.Status.OK if ok else RuleJobConcept.Status.FAILED,
            error="" if ok else item.error[:5000],
            attempts=item.attempts,
            last_answer=item.last_answer,
            finished_at=now,
        )
        if not (ok and updated):
            continue
        assert item.rules is not None
        rules += [
            Rule(
                job=job,
                concept_id=item.concept_id,
                variation_id=item.variation_ids[label],
                text=text,
                generator=job.engine,
            )
            for label, text in item.rules.items()
        ]
    Rule.objects.bulk_create(rules)


def _commit(job: RuleJob, work: list[Work]) -> rounds.Status:
    _write(job, work)
    outcomes = job.job_concepts
    job.items_done = outcomes.exclude(status=RuleJobConcept.Status.PENDING).count()
    job.cost = cost_of_scope(job.scope)
    pending = outcomes.filter(status=RuleJobConcept.Status.PENDING).exists()
    return RULE_JOBS.after_round(job, more=pending)


# The lifecycle every round-based job shares (rounds.jobs), for rule jobs.
RULE_JOBS = rounds.LeasedJobKind(
    label="rule job",
    sweep_name="lexical rule job",
    model=RuleJob,
    work=_ask_pending,
    commit=_commit,
    enqueue_round=enqueue_round,
    state_error=JobStateError,
    **ENGINE_ERRORS,
    cost=lambda job_id: cost_of_scope(f"lexical_rules:{job_id}"),
)
advance_job = RULE_JOBS.advance  # a round (see the module docstring)
cancel_job = RULE_JOBS.cancel
recover_jobs = RULE_JOBS.recover
run_in_foreground = RULE_JOBS.run_in_foreground
