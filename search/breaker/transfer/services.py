"""A transfer's lifecycle on the round kernel (ADR 0010, 0016): start, rounds, cancel, recovery
and the foreground loop.

A round (:func:`advance_transfer`):

1. claim the transfer with a lease (a conditional UPDATE on status, round index and lease);
2. take the next ``BREAKER_TRANSFER_ROUND_ITEMS`` missing (text, translator, language) results,
   translate them (one batch per translator, language and source language) and score each
   translation with every QE engine (one batch per engine) — engine calls outside any
   transaction, through the engines call path (concurrent within each engine's limit, cached,
   booked in the ledger under the transfer's scope as each answer lands);
3. in one transaction guarded by the claim: write the results, the counters and the cost,
   advance the round index, release the claim, and finish when nothing is missing.

A worker killed in 1–2 leaves nothing written; the round is re-run (redelivery or the shared
sweep once the lease expired), asks the same questions and is answered from the cache; the
claim and ``transfer_result_unique_cell`` keep any result from being written twice.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction

import rounds
from engines.interfaces import ENGINE_ERRORS, EngineError, isolated
from engines.registry import resolve
from engines.selectors import cost_of_scope, queue_for_engines
from search.breaker.services import RunStateError, saved_engine
from search.breaker.transfer.config import validate_transfer
from search.models import BreakerChain, BreakerTransfer, TransferResult

__all__ = [
    "ADVANCE_TASK",
    "advance_transfer",
    "cancel_transfer",
    "enqueue_round",
    "pending_items",
    "recover_transfers",
    "run_in_foreground",
    "start_transfer",
]

ADVANCE_TASK = "search.advance_breaker_transfer"
Status = rounds.Status


def _round_items() -> int:
    return int(getattr(settings, "BREAKER_TRANSFER_ROUND_ITEMS", 400))


def enqueue_round(transfer_id: int, round_index: int, *, countdown: float | None = None) -> None:
    """Queue round ``round_index`` of a transfer once the current transaction commits."""
    translators, qe = BreakerTransfer.objects.values_list("translators", "qe_engines").get(
        pk=transfer_id
    )
    queue = queue_for_engines([*translators, *qe])
    rounds.enqueue(ADVANCE_TASK, (transfer_id, round_index), queue=queue, countdown=countdown)


def start_transfer(
    config: dict[str, Any], *, created_by=None, enqueue: bool = True
) -> BreakerTransfer:
    """Validate ``config`` (:func:`search.breaker.transfer.config.validate_transfer`), create
    the transfer (and its inline engines) and queue its first round on commit."""
    fields, runs, engines = validate_transfer(config)
    with transaction.atomic():
        for engine in engines:
            saved_engine(engine)
        transfer = BreakerTransfer.objects.create(**fields, created_by=created_by)
        transfer.runs.set(runs)
        if enqueue:
            enqueue_round(transfer.pk, 0)
    return transfer


@dataclass
class Item:
    """One result to compute: a selected text, a translator and a target language."""

    chain_id: int
    source: str
    src_lang: str
    translator: str
    tgt_lang: str
    translation: str = ""
    qe: dict[str, float] = field(default_factory=dict)
    error: str = ""


def pending_items(transfer: BreakerTransfer) -> list[Item]:
    """Every result the transfer still lacks, in the matrix's order (language, translator,
    run, chain), so a round fills whole columns before starting the next."""
    chains = list(
        BreakerChain.objects.filter(run__in=transfer.runs.all())
        .exclude(selected_text="")
        .order_by("run_id", "index")
        .values_list("pk", "selected_text", "run__src_lang")
    )
    done = set(
        TransferResult.objects.filter(transfer=transfer).values_list(
            "chain_id", "translator", "tgt_lang"
        )
    )
    return [
        Item(chain_id, text, src_lang, translator, lang)
        for lang in transfer.languages
        for translator in transfer.translators
        for chain_id, text, src_lang in chains
        if (chain_id, translator, lang) not in done
    ]


def _translate(transfer: BreakerTransfer, items: list[Item]) -> None:
    batches: dict[tuple[str, str, str], list[Item]] = defaultdict(list)
    for item in items:
        batches[(item.translator, item.src_lang, item.tgt_lang)].append(item)
    for (name, src, tgt), batch in batches.items():
        translator = resolve(name, "translate", scope=transfer.scope)
        call = partial(translator.translate, src_lang=src, tgt_lang=tgt)
        for item, output in zip(batch, isolated(call, [i.source for i in batch]), strict=True):
            if isinstance(output, EngineError):
                item.error = f"{name} failed: {output.message}"
            else:
                item.translation = str(output)


def _score(transfer: BreakerTransfer, items: list[Item]) -> None:
    for name in transfer.qe_engines:
        batches: dict[tuple[str, str], list[Item]] = defaultdict(list)
        for item in items:
            if not item.error:
                batches[(item.src_lang, item.tgt_lang)].append(item)
        estimator = resolve(name, "quality", scope=transfer.scope)
        for (src, tgt), batch in batches.items():
            call = partial(estimator.score, src_lang=src, tgt_lang=tgt)
            pairs = [(i.source, i.translation) for i in batch]
            for item, score in zip(batch, isolated(call, pairs), strict=True):
                if isinstance(score, EngineError):
                    item.error = f"QE {name} failed: {score.message}"
                else:
                    item.qe[name] = float(score)


def _result(transfer: BreakerTransfer, item: Item) -> TransferResult:
    ok = not item.error
    return TransferResult(
        transfer=transfer,
        chain_id=item.chain_id,
        translator=item.translator,
        tgt_lang=item.tgt_lang,
        source=item.source,
        translation=item.translation,
        qe=item.qe if ok else {},
        # Mean over the QE engines, as for the breaker runs' steps (seed 001 §3).
        quality=sum(item.qe.values()) / len(item.qe) if ok else None,
        error=item.error[:5000],
    )


def _translate_and_score(transfer_id: int, worker: str) -> list[Item]:
    """The round's missing results, translated and scored (engine calls, no transaction)."""
    transfer = BreakerTransfer.objects.get(pk=transfer_id)
    if transfer.money_spent:
        return []
    items = pending_items(transfer)[: _round_items()]
    _translate(transfer, items)
    _score(transfer, items)
    return items


def _commit(transfer: BreakerTransfer, items: list[Item]) -> rounds.Status:
    """The round's results on the locked transfer; a spent budget ends it with a note."""
    TransferResult.objects.bulk_create([_result(transfer, item) for item in items])
    transfer.items_done = TransferResult.objects.filter(transfer=transfer).count()
    transfer.cost = cost_of_scope(transfer.scope)
    missing = transfer.items_total - transfer.items_done
    if missing and transfer.money_spent and transfer.status == BreakerTransfer.Status.RUNNING:
        transfer.error = (
            f"stopped: the budget of {transfer.budget_money} was spent ({transfer.cost:.4f}); "
            f"{missing} translation(s) not made"
        )
        missing = 0
    return TRANSFERS.after_round(transfer, more=bool(missing))


# The lifecycle every round-based job shares (rounds.jobs), for breaker transfers.
TRANSFERS = rounds.LeasedJobKind(
    label="transfer",
    sweep_name="breaker transfer",
    model=BreakerTransfer,
    work=_translate_and_score,
    commit=_commit,
    enqueue_round=enqueue_round,
    state_error=RunStateError,
    **ENGINE_ERRORS,
)
advance_transfer = TRANSFERS.advance  # a round (see the module docstring)
cancel_transfer = TRANSFERS.cancel
recover_transfers = TRANSFERS.recover
run_in_foreground = TRANSFERS.run_in_foreground
