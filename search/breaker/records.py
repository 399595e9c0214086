"""A breaker run's selected texts outside the database: JSONL records and ``TextSample``s.

One record per chain: the selected text with its whole chain, the method, the engines, the
scores and the seed's provenance. The same records are the page's export and the API's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.db import transaction
from django.http import StreamingHttpResponse

from search.breaker.methods import spec
from search.breaker.prompts import PROMPT_VERSION
from search.models import BreakerChain, BreakerRun, BreakerStep, TextSample, TopicTree
from search.topics.services import import_topic_tree, text_key

__all__ = [
    "chain_record",
    "jsonl_response",
    "samples_tree_name",
    "save_selected_as_samples",
    "step_record",
    "stream_records",
]


def step_record(step: BreakerStep) -> dict[str, Any]:
    """One step as the records and the challenge-set provenance write it."""
    return {
        "step": step.index,
        "source": step.source,
        "translations": step.translations,
        "qe": step.qe,
        "quality": step.quality,
        "edit_share": step.edit_share,
        "parse_attempts": step.parse_attempts,
        "words": step.word_count,
    }


def chain_record(run: BreakerRun, chain: BreakerChain, steps: list[BreakerStep]) -> dict:
    return {
        "run": run.pk,
        "run_name": run.name,
        "comparison": run.comparison,
        "method": run.method,
        "method_label": spec(run.method).label,
        "chain": chain.index,
        "status": chain.status,
        "error": chain.error,
        "text": chain.selected_text,
        "selected_step": chain.selected_step,
        "quality": chain.selected_quality,
        "src_lang": run.src_lang,
        "tgt_lang": run.tgt_lang,
        "engines": {
            "llm": run.llm_engine.name if run.llm_engine is not None else None,
            "targets": run.targets,
            "qe": run.qe_engines,
        },
        "settings": {
            "n_steps": run.n_steps,
            "k_generations": run.k_generations,
            "max_edit_share": run.max_edit_share,
            "target_words": chain.target_words,
            "seed": run.seed,
            "prompt_version": PROMPT_VERSION,
        },
        "seed": chain.seed_text,
        "provenance": {**chain.seed_ref, "seeds_from": run.seeds_from},
        "steps": [step_record(step) for step in steps],
    }


def stream_records(run: BreakerRun) -> Iterator[str]:
    steps: dict[int, list[BreakerStep]] = {}
    for step in BreakerStep.objects.filter(chain__run=run).order_by("chain_id", "index"):
        steps.setdefault(step.chain_id, []).append(step)
    for chain in BreakerChain.objects.filter(run=run).order_by("index"):
        record = chain_record(run, chain, steps.get(chain.pk, []))
        yield json.dumps(record, ensure_ascii=False) + "\n"


def jsonl_response(run: BreakerRun) -> StreamingHttpResponse:
    response = StreamingHttpResponse(stream_records(run), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="breaker-run-{run.pk}.jsonl"'
    return response


def samples_tree_name(run: BreakerRun) -> str:
    return f"MT-breaker #{run.pk}: {run.name}"[:200]


def save_selected_as_samples(run: BreakerRun) -> int:
    """The selected texts become ``TextSample``s (origin ``breaker``) of a one-topic tree named
    after the run, so they can enter search runs and challenge sets. Idempotent; returns how
    many chains have a sample."""
    name = samples_tree_name(run)
    with transaction.atomic():
        tree = TopicTree.objects.filter(name=name).first() or import_topic_tree(
            [spec(run.method).label],
            name=name,
            language=run.src_lang,
            description=f"Texts selected by breaker run #{run.pk} ({run.method}).",
        )
        topic = tree.topics.get(arm=0)
        chains = BreakerChain.objects.filter(run=run, sample__isnull=True).exclude(selected_text="")
        for chain in chains:
            sample, _ = TextSample.objects.get_or_create(
                topic=topic,
                text_key=text_key(chain.selected_text),
                defaults={
                    "text": chain.selected_text,
                    "source_url": str(chain.seed_ref.get("source_url") or "")[:1000],
                    "origin": TextSample.Origin.BREAKER,
                    "origin_detail": {
                        "run": run.pk,
                        "chain": chain.index,
                        "step": chain.selected_step,
                        "method": run.method,
                        "quality": chain.selected_quality,
                        "seed_ref": chain.seed_ref,
                    },
                },
            )
            chain.sample = sample
            chain.save(update_fields=["sample", "updated_at"])
    return BreakerChain.objects.filter(run=run, sample__isnull=False).count()
