"""A mining job's lifecycle on the round kernel: start, rounds, cancel, recovery, foreground.

A round (:func:`advance_mining`):

1. claim the job with a lease (a conditional UPDATE on status, round index and lease);
2. read the next ``chunk_size`` pairs after the state's cursor and run one chunk of the current
   pass (``lexical.mining.pipeline``): pass 1 lemmatises, aligns and counts; pass 2 collects
   example pairs for the concepts the filters kept at the end of pass 1;
3. in one transaction guarded by the claim: write the new counts (or examples) and cursor, the
   progress, advance the round index and release the claim. The last round of pass 2 writes
   every ``Concept``, ``Variation`` and ``ConceptExample`` in that same transaction: all or
   nothing.

A worker killed in 1–2 leaves nothing written: the round runs again from the same cursor, so at
most one chunk is re-done and nothing is counted twice. Progress counts pairs read over both
passes (``items_total`` is twice the corpus size).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils.module_loading import import_string

import rounds
from lexical.mining.counting import MiningCounts
from lexical.mining.examples import ExampleCollector
from lexical.mining.filters import ConceptCandidate, PolysemyFilter
from lexical.mining.params import MiningParams, MiningParamsError, parse_params
from lexical.mining.pipeline import Miner, Pair
from lexical.mining.tagging import TaggerUnavailable, load_tagger
from lexical.models import (
    Concept,
    ConceptExample,
    MiningJob,
    MiningState,
    ParallelCorpus,
    SentencePair,
    Variation,
)

__all__ = [
    "ADVANCE_TASK",
    "MiningStateError",
    "advance_mining",
    "cancel_mining",
    "enqueue_round",
    "recover_mining",
    "run_in_foreground",
    "start_mining",
]

ADVANCE_TASK = "lexical.advance_mining"
Status = rounds.Status


class MiningStateError(ValueError):
    """The action does not apply to the job (or corpus) in its current state."""


def enqueue_round(job_id: int, round_index: int, *, countdown: float | None = None) -> None:
    rounds.enqueue(
        ADVANCE_TASK, (job_id, round_index), queue=settings.CELERY_SLOW_QUEUE, countdown=countdown
    )


def polysemy_filter() -> PolysemyFilter | None:
    """The WSD filter named by ``LEXICAL_POLYSEMY_FILTER`` (a dotted path to a class), or None:
    off by default (the paper's EWISER needs model weights)."""
    path = getattr(settings, "LEXICAL_POLYSEMY_FILTER", "")
    return import_string(path)() if path else None


def _tagger(params: MiningParams):
    return load_tagger(params.pos_pipeline) if params.pos_pipeline else None


def start_mining(
    corpus: ParallelCorpus, raw_params: Any = None, *, created_by=None, enqueue: bool = True
) -> MiningJob:
    """Validate the parameters, create the job and queue its first round.

    Raises :class:`MiningParamsError` (by field) or :class:`MiningStateError`.
    """
    params = parse_params(raw_params)
    if corpus.status != ParallelCorpus.Status.READY:
        raise MiningStateError(f"the corpus is {corpus.get_status_display().lower()}, not ready")
    size = SentencePair.objects.filter(corpus=corpus).count()
    if size == 0:
        raise MiningStateError("the corpus has no sentence pairs")
    if params.pos_pipeline:
        try:
            load_tagger(params.pos_pipeline)
        except TaggerUnavailable as exc:
            raise MiningParamsError({"pos_pipeline": str(exc)}) from None
    with transaction.atomic():
        job = MiningJob.objects.create(
            corpus=corpus,
            params=params.to_dict(),
            pos_used=bool(params.pos_pipeline),
            items_total=2 * size,
            created_by=created_by if getattr(created_by, "pk", None) else None,
            stats={"polysemy_filter": _polysemy_name()},
        )
        MiningState.objects.create(job=job)
        if enqueue:
            enqueue_round(job.pk, 0)
    return job


def _polysemy_name() -> str:
    active = polysemy_filter()
    return getattr(active, "name", type(active).__name__) if active is not None else "off"


def _chunk(corpus_id: int, cursor: int, size: int) -> list[tuple[int, int, str, str]]:
    rows = (
        SentencePair.objects.filter(corpus_id=corpus_id, position__gt=cursor)
        .order_by("position")
        .values_list("pk", "position", "src", "tgt")[:size]
    )
    return list(rows.iterator(chunk_size=2000))


def _encode_concepts(concepts: Sequence[ConceptCandidate]) -> list:
    return [[c.lemma, c.pos, c.entropy, [[t, n] for t, n in c.variations]] for c in concepts]


def _decode_concepts(rows: list) -> list[ConceptCandidate]:
    return [ConceptCandidate(lemma, pos, [(t, n) for t, n in v], h) for lemma, pos, h, v in rows]


class _Round:
    """What one round computed, written by :func:`_commit`."""

    def __init__(self, state: MiningState) -> None:
        self.phase = state.phase
        self.cursor = state.cursor
        self.counts: bytes | None = None
        self.concepts: list | None = None
        self.examples: bytes | None = None
        self.pairs = 0
        self.stats: dict[str, Any] = {}
        self.finish = False


def _run_round(job: MiningJob, state: MiningState) -> _Round:
    params = MiningParams(**job.params)
    miner = Miner(job.corpus.src_lang, job.corpus.tgt_lang, params, tagger=_tagger(params))
    result = _Round(state)
    rows = _chunk(job.corpus_id, state.cursor, params.chunk_size)
    chunk: list[Pair] = [(pk, src, tgt) for pk, _, src, tgt in rows]
    result.pairs = len(rows)
    if rows:
        result.cursor = rows[-1][1]
    exhausted = len(rows) < params.chunk_size
    if state.phase == MiningState.Phase.COUNT:
        counts = MiningCounts.from_bytes(bytes(state.counts))
        if chunk:
            miner.count_chunk(chunk, counts)
        result.counts = counts.to_bytes()
        if exhausted:
            concepts, stats = miner.select(counts, polysemy_filter())
            result.stats = {
                **stats.as_dict(),
                "pairs_read": counts.pairs_read,
                "pairs_aligned": counts.pairs_aligned,
                "links_counted": sum(counts.links.values()),
                "lemmatised": {"src": miner.src.supported, "tgt": miner.tgt.supported},
                "stopword_top_n": params.stopword_top_n,
            }
            result.concepts = _encode_concepts(concepts)
            result.phase, result.cursor = MiningState.Phase.EXAMPLES, 0
            result.finish = not concepts
    else:
        concepts = _decode_concepts(state.concepts)
        collector = miner.collector(concepts)
        collector.load_bytes(bytes(state.examples))
        if chunk:
            miner.collect_chunk(chunk, collector)
        result.examples = collector.to_bytes()
        result.finish = exhausted
    return result


def _mine_chunk(job_id: int, worker: str) -> _Round:
    job = MiningJob.objects.select_related("corpus").get(pk=job_id)
    state, _ = MiningState.objects.get_or_create(job=job)
    return _run_round(job, state)


def _commit(job: MiningJob, result: _Round) -> rounds.Status:
    """The chunk's counts (or examples) and cursor; the last round writes every concept."""
    state = MiningState.objects.select_for_update().get(job=job)
    state.phase, state.cursor = result.phase, result.cursor
    if result.counts is not None:
        state.counts = result.counts
    if result.concepts is not None:
        state.concepts = result.concepts
    if result.examples is not None:
        state.examples = result.examples
    job.items_done = min(job.items_total, job.items_done + result.pairs)
    if result.stats:
        job.stats = {**job.stats, **result.stats}
    status = MINING_JOBS.after_round(job, more=not result.finish)
    if status is Status.DONE:
        written = _write_concepts(job, state)
        job.stats = {**job.stats, **written}
        job.items_done = job.items_total
        state.phase = MiningState.Phase.DONE
    state.save()
    return status


def _write_concepts(job: MiningJob, state: MiningState) -> dict[str, int]:
    """Every concept, variation and example of the job (inside the final round's transaction)."""
    params = MiningParams(**job.params)
    concepts = _decode_concepts(state.concepts)
    surfaces = MiningCounts.from_bytes(bytes(state.counts)).surface_index()
    collector = ExampleCollector(
        {c.key: [t for t, _ in c.variations] for c in concepts},
        max_examples=params.max_examples,
        token_limit=params.example_token_limit,
        pos_used=job.pos_used,
    )
    collector.load_bytes(bytes(state.examples))
    corpus = job.corpus
    n_examples = 0
    for candidate in concepts:
        concept = Concept.objects.create(
            mining_job=job,
            origin=Concept.Origin.MINED,
            src_lang=corpus.src_lang,
            tgt_lang=corpus.tgt_lang,
            lemma=candidate.lemma[:200],
            pos=candidate.pos[:16],
            entropy=candidate.entropy,
            total_count=candidate.total_count,
        )
        for target, count in candidate.variations:
            forms = [form for form, _ in surfaces.get(target, [])] or [target]
            variation = Variation.objects.create(
                concept=concept, lemma=target[:200], surface_forms=forms, count=count
            )
            examples = [
                ConceptExample(
                    concept=concept,
                    variation=variation,
                    pair_id=e.pair,
                    src_start=e.src_start,
                    src_end=e.src_end,
                    tgt_start=e.tgt_start,
                    tgt_end=e.tgt_end,
                    src_tokens=e.src_tokens,
                )
                for e in collector.examples(candidate.lemma, candidate.pos, target)
            ]
            ConceptExample.objects.bulk_create(examples)
            n_examples += len(examples)
    return {"concepts_written": len(concepts), "examples_written": n_examples}


# The lifecycle every round-based job shares (rounds.jobs), for mining jobs.
MINING_JOBS = rounds.LeasedJobKind(
    label="mining job",
    sweep_name="lexical mining",
    model=MiningJob,
    work=_mine_chunk,
    commit=_commit,
    enqueue_round=enqueue_round,
    state_error=MiningStateError,
    permanent=(TaggerUnavailable,),
)
advance_mining = MINING_JOBS.advance  # a round (see the module docstring)
cancel_mining = MINING_JOBS.cancel
recover_mining = MINING_JOBS.recover
run_in_foreground = MINING_JOBS.run_in_foreground
