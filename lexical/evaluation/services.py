"""An evaluation's lifecycle on the round kernel (like the breaker transfers): start, rounds,
cancel, recovery and the foreground loop.

A round (:func:`advance_evaluation`):

1. claim the evaluation with a lease (a conditional UPDATE on status, round index and lease);
2. take the next ``LEXICAL_EVAL_ROUND_ITEMS`` missing (entry, run, example) answers and ask for
   them, outside any transaction, through the engines call path (cached, booked in the ledger
   under the evaluation's scope): chat engines get the Fig. 7/8 prompt at the evaluation's
   temperature (0) with the options in the order drawn for (run, example); an answer outside the
   ```answer``` template is asked once more with the reminder of App. B.3; translate engines
   translate the source and their output is matched to a variation (App. B.2);
3. in one transaction guarded by the claim: write the answers, the counters and the cost,
   advance the round index, release the claim, and finish when nothing is missing.

A worker killed in 1–2 leaves nothing written; the round is re-run (redelivery or the shared
sweep once the lease expired), asks the same questions and is answered from the cache; the claim
and ``lexical_answer_unique_cell`` keep any answer from being written twice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import islice
from typing import Any

from django.conf import settings
from django.db import transaction

import rounds
from engines.interfaces import ENGINE_ERRORS, EngineError, isolated
from engines.registry import resolve
from engines.selectors import cost_of_scope
from lexical.evaluation import matching, prompts
from lexical.evaluation.config import EvaluationConfigError, items_total, validate_evaluation
from lexical.evaluation.entries import TRANSLATE, Entry
from lexical.evaluation.options import option_order
from lexical.models import LexicalAnswer, LexicalEvaluation
from lexical.models.evaluation import RAW_ANSWER_CHARS

__all__ = [
    "ADVANCE_TASK",
    "EvaluationStateError",
    "advance_evaluation",
    "cancel_evaluation",
    "enqueue_round",
    "pending_items",
    "recover_evaluations",
    "run_in_foreground",
    "start_lexical_evaluation",
]

ADVANCE_TASK = "lexical.advance_evaluation"
Status = rounds.Status


class EvaluationStateError(RuntimeError):
    """A control that does not apply in the evaluation's state (cancel a finished one)."""


def _round_items() -> int:
    return int(settings.LEXICAL_EVAL_ROUND_ITEMS)


def enqueue_round(evaluation_id: int, round_index: int, *, countdown: float | None = None) -> None:
    """Queue round ``round_index`` of an evaluation once the current transaction commits."""
    rounds.enqueue(
        ADVANCE_TASK,
        (evaluation_id, round_index),
        queue=settings.CELERY_SLOW_QUEUE,
        countdown=countdown,
    )


def start_lexical_evaluation(
    config: Any, *, created_by=None, enqueue: bool = True
) -> LexicalEvaluation:
    """Validate ``config`` (:func:`lexical.evaluation.config.validate_evaluation`), create the
    evaluation with what it will ask frozen in, and queue its first round on commit."""
    fields, errors = validate_evaluation(config)
    if errors:
        raise EvaluationConfigError(errors)
    fields["name"] = (
        fields["name"]
        or (
            f"{fields['selection'].name}: "
            + ", ".join(Entry.from_dict(e).key for e in fields["entries"])
        )[:200]
    )
    with transaction.atomic():
        evaluation = LexicalEvaluation.objects.create(
            **fields,
            created_by=created_by if getattr(created_by, "is_authenticated", False) else None,
            items_total=items_total(
                fields["entries"], fields["runs"], len(fields["snapshot"]["examples"])
            ),
        )
        if enqueue:
            enqueue_round(evaluation.pk, 0)
    return evaluation


# --- What to ask -----------------------------------------------------------------------------


@dataclass
class Item:
    """One answer to get: an entry, a run and an example (as frozen in the snapshot)."""

    entry: Entry
    run: int
    example: dict[str, Any]
    options: list[int]  # variation ids in the order shown; empty for a translate engine
    raw: str = ""
    reasked: bool = False
    chosen: int | None = None
    error: str = ""


def pending_items(evaluation: LexicalEvaluation, limit: int | None = None) -> list[Item]:
    """The answers the evaluation still lacks (the first ``limit`` of them), entry by entry, run
    by run, in selection order (so a round finishes one engine's run before the next)."""
    return list(islice(_pending(evaluation), limit))


def _pending(evaluation: LexicalEvaluation) -> Iterator[Item]:
    done = set(
        LexicalAnswer.objects.filter(evaluation=evaluation).values_list(
            "entry_key", "run", "example_id"
        )
    )
    concepts = evaluation.snapshot["concepts"]
    for data in evaluation.entries:
        entry = Entry.from_dict(data)
        runs = 1 if entry.kind == TRANSLATE else evaluation.runs
        for run in range(runs):
            for example in evaluation.snapshot["examples"]:
                if (entry.key, run, example["id"]) in done:
                    continue
                ids = [v["id"] for v in concepts[str(example["concept"])]["variations"]]
                # Drawn only for what is asked: the order depends on (seed, run, example) alone.
                order = (
                    []
                    if entry.kind == TRANSLATE
                    else option_order(evaluation.seed, run, example["id"], ids)
                )
                yield Item(entry, run, example, order)


def _variations(evaluation: LexicalEvaluation, item: Item) -> list[dict[str, Any]]:
    return evaluation.snapshot["concepts"][str(item.example["concept"])]["variations"]


def _messages(evaluation: LexicalEvaluation, item: Item) -> list[dict[str, str]]:
    concept = evaluation.snapshot["concepts"][str(item.example["concept"])]
    by_id = {v["id"]: v for v in concept["variations"]}
    labels = [by_id[v]["label"] for v in item.options]
    rules = None
    if item.entry.uses_rules:
        written = evaluation.snapshot["rules"][item.entry.generator][str(item.example["concept"])]
        rules = {by_id[v]["label"]: written[str(v)] for v in item.options}
    return prompts.selection_messages(concept["lemma"], item.example["source"], labels, rules)


def _labels(evaluation: LexicalEvaluation, item: Item) -> list[str]:
    by_id = {v["id"]: v for v in _variations(evaluation, item)}
    return [by_id[v]["label"] for v in item.options]


def _choose(evaluation: LexicalEvaluation, item: Item, text: str, *, whole: bool) -> int | None:
    variations = _variations(evaluation, item)
    found = matching.match_variation(text, [v["forms"] for v in variations], whole=whole)
    return None if found is None else variations[found.index]["id"]


# --- Asking ------------------------------------------------------------------------------------


def _complete(chat: Any, temperature: float) -> Callable[[list], list[str]]:
    def call(conversations: list[Sequence[dict[str, str]]]) -> list[str]:
        many = getattr(chat, "complete_many", None)
        if many is not None:
            return [c.text for c in many(conversations, temperature=temperature)]
        return [chat.complete(m, temperature=temperature).text for m in conversations]

    return call


def _ask_chat(evaluation: LexicalEvaluation, entry: Entry, items: list[Item]) -> None:
    call = _complete(resolve(entry.engine, "chat", scope=evaluation.scope), evaluation.temperature)
    conversations = [_messages(evaluation, item) for item in items]
    for item, answer in zip(items, isolated(call, conversations), strict=True):
        _record_chat(item, answer)
    again = [
        (item, prompts.reask_messages(messages, _labels(evaluation, item)))
        for item, messages in zip(items, conversations, strict=True)
        if not item.error and matching.extract_answer(item.raw) is None
    ]
    for (item, _), answer in zip(again, isolated(call, [m for _, m in again]), strict=True):
        item.reasked = True
        _record_chat(item, answer)
    for item in items:
        answer = matching.extract_answer(item.raw)
        if answer is not None:
            item.chosen = _choose(evaluation, item, answer, whole=True)


def _record_chat(item: Item, answer: Any) -> None:
    if isinstance(answer, EngineError):
        item.error = f"{item.entry.engine} failed: {answer.message}"
    else:
        item.raw = str(answer)


def _ask_translator(evaluation: LexicalEvaluation, entry: Entry, items: list[Item]) -> None:
    snapshot = evaluation.snapshot
    translator = resolve(entry.engine, "translate", scope=evaluation.scope)
    call = partial(
        translator.translate, src_lang=snapshot["src_lang"], tgt_lang=snapshot["tgt_lang"]
    )
    for item, output in zip(
        items, isolated(call, [i.example["source"] for i in items]), strict=True
    ):
        if isinstance(output, EngineError):
            item.error = f"{entry.engine} failed: {output.message}"
            continue
        item.raw = str(output)
        item.chosen = _choose(evaluation, item, item.raw, whole=False)


def _ask(evaluation: LexicalEvaluation, items: list[Item]) -> None:
    by_entry: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        by_entry[item.entry.key].append(item)
    for batch in by_entry.values():
        entry = batch[0].entry
        if entry.kind == TRANSLATE:
            _ask_translator(evaluation, entry, batch)
        else:
            _ask_chat(evaluation, entry, batch)


def _answer(evaluation: LexicalEvaluation, item: Item) -> LexicalAnswer:
    return LexicalAnswer(
        evaluation=evaluation,
        entry_key=item.entry.key,
        run=item.run,
        example_id=item.example["id"],
        option_order=item.options,
        raw_answer=item.raw[:RAW_ANSWER_CHARS],
        chosen_id=item.chosen,
        correct=item.chosen is not None and item.chosen == item.example["variation"],
        reasked=item.reasked,
        error=item.error[:2000],
    )


# --- Rounds ------------------------------------------------------------------------------------


def _ask_pending(evaluation_id: int, worker: str) -> list[Item]:
    """The round's missing answers, asked for (engine calls, no transaction)."""
    evaluation = LexicalEvaluation.objects.get(pk=evaluation_id)
    items = pending_items(evaluation, _round_items())
    _ask(evaluation, items)
    return items


def _commit(evaluation: LexicalEvaluation, items: list[Item]) -> rounds.Status:
    LexicalAnswer.objects.bulk_create([_answer(evaluation, item) for item in items])
    evaluation.items_done = LexicalAnswer.objects.filter(evaluation=evaluation).count()
    evaluation.cost = cost_of_scope(evaluation.scope)
    return EVALUATIONS.after_round(evaluation, more=evaluation.items_done < evaluation.items_total)


# The lifecycle every round-based job shares (rounds.jobs), for lexical evaluations.
EVALUATIONS = rounds.LeasedJobKind(
    label="evaluation",
    sweep_name="lexical evaluation",
    model=LexicalEvaluation,
    work=_ask_pending,
    commit=_commit,
    enqueue_round=enqueue_round,
    state_error=EvaluationStateError,
    **ENGINE_ERRORS,
)
advance_evaluation = EVALUATIONS.advance  # a round (see the module docstring)
cancel_evaluation = EVALUATIONS.cancel
recover_evaluations = EVALUATIONS.recover
run_in_foreground = EVALUATIONS.run_in_foreground
