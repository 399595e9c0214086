"""How a search run's pulls read outside the database: rows for the pages, records for exports.

Exports are read-only views of the run shared by the pages and the API. The pulls export streams
with ``iterator()`` and writes lines in blocks, so a million pulls never sit in memory at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.http import HttpResponse, StreamingHttpResponse

from search.models import Pull, SearchRun
from search.runs.selectors import pulls_of_arm, run_summary, top_topics

__all__ = [
    "PullView",
    "TranslationRow",
    "pull_record",
    "pull_view",
    "stream_pulls_jsonl",
    "top_k_document",
]

# Lines per block written to the response: large enough to keep the number of writes low,
# small enough that a block stays well under a megabyte.
LINES_PER_BLOCK = 500
# Texts per top topic in the top-k export, hardest first.
TEXTS_PER_TOPIC = 5


@dataclass(frozen=True)
class TranslationRow:
    translator: str
    text: str
    scores: list[float | None]  # aligned with PullView.estimators
    human_score: float | None


@dataclass(frozen=True)
class PullView:
    pull: Pull
    estimators: list[str]
    rows: list[TranslationRow]

    @property
    def source_url(self) -> str:
        """The sample's URL when it is a web address (a corpus may hold anything)."""
        sample = self.pull.sample  # no query when sample_id is None
        url = sample.source_url if sample is not None else ""
        return url if url.startswith(("https://", "http://")) else ""

    @property
    def can_send(self) -> bool:
        """Annotators judge translations: a pull without any, or one already sent, cannot go."""
        return bool(self.pull.translations) and self.pull.human_status == Pull.HumanStatus.NONE


def pull_view(pull: Pull) -> PullView:
    """A pull's translations side by side with each quality estimator's score."""
    scores = {(translator, estimator): value for translator, estimator, value in pull.scores}
    estimators = sorted({estimator for _, estimator in scores})
    translators = sorted(set(pull.translations) | {translator for translator, _ in scores})
    rows = [
        TranslationRow(
            translator=name,
            text=pull.translations.get(name, ""),
            scores=[scores.get((name, estimator)) for estimator in estimators],
            human_score=pull.human_scores.get(name),
        )
        for name in translators
    ]
    return PullView(pull=pull, estimators=estimators, rows=rows)


def _origin(run: SearchRun, pull: Pull) -> str:
    sample = pull.sample  # no query when sample_id is None
    if sample is not None:
        return sample.origin
    return run.sampler  # synthetic pulls have no stored sample


def pull_record(run: SearchRun, pull: Pull) -> dict[str, Any]:
    """One pull as an export record (the JSONL line, the API's pull and the top-k texts)."""
    return {
        "id": pull.pk,
        "round": pull.round_index,
        "slot": pull.slot,
        "arm": pull.arm,
        "topic_id": pull.topic_id,
        "topic": pull.topic.path if pull.topic is not None else None,
        "text": pull.text,
        "source_url": pull.sample.source_url if pull.sample is not None else "",
        "origin": _origin(run, pull),
        "translations": pull.translations,
        "scores": [
            {"translator": translator, "quality_estimator": estimator, "score": value}
            for translator, estimator, value in pull.scores
        ],
        "automatic_difficulty": pull.automatic_difficulty,
        "human_difficulty": pull.human_difficulty,
        "human_scores": pull.human_scores,
        "human_status": pull.human_status,
        "difficulty": pull.difficulty,
    }


def stream_pulls_jsonl(run: SearchRun) -> Iterator[bytes]:
    """Every pull of the run in order, one JSON object per line."""
    pulls = (
        Pull.objects.filter(run=run)
        .select_related("topic", "sample")
        .order_by("round_index", "slot")
        .iterator(chunk_size=2000)
    )
    block: list[str] = []
    for pull in pulls:
        block.append(json.dumps(pull_record(run, pull), ensure_ascii=False))
        if len(block) == LINES_PER_BLOCK:
            yield ("\n".join(block) + "\n").encode()
            block = []
    if block:
        yield ("\n".join(block) + "\n").encode()


def _run_config(run: SearchRun) -> dict[str, Any]:
    """What the run was asked to do (the shape ``run_search`` reads, engines by name)."""
    return {
        "name": run.name,
        "tree": run.tree.name if run.tree is not None else None,
        "sampler": run.sampler,
        "sampler_engine": run.sampler_engine.name if run.sampler_engine is not None else None,
        "difficulty_engine": run.difficulty_engine.name,
        "src_lang": run.src_lang,
        "tgt_lang": run.tgt_lang,
        "algorithm": run.algorithm,
        "params": run.params,
        "budget_pulls": run.budget_pulls,
        "budget_money": float(run.budget_money) if run.budget_money is not None else None,
        "k": run.k,
        "seed": run.seed,
        "batch_size": run.batch_size,
        "human_mode": run.human_mode,
        "human_settings": run.human_settings,
    }


def top_k_document(run: SearchRun, texts_per_topic: int = TEXTS_PER_TOPIC) -> dict[str, Any]:
    """The run's configuration and summary, and its top-k topics with their hardest texts."""
    topics = []
    for row in top_topics(run):
        texts = pulls_of_arm(run, row.arm, limit=texts_per_topic)
        topics.append(
            {
                "rank": row.rank,
                "arm": row.arm,
                "topic_id": row.topic.pk if row.topic else None,
                "topic": row.name,
                "mean": row.mean,
                "count": row.count,
                "estimate": row.posterior_mean,
                "interval": [row.lower, row.upper],
                "true_mean": row.true_mean,
                "texts": [pull_record(run, pull) for pull in texts],
            }
        )
    return {
        "run": run.pk,
        "config": _run_config(run),
        "summary": run_summary(run),
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "top_k": topics,
    }


# --- Downloads (the run page's export buttons and the API share them) --------------------


def pulls_jsonl_response(run: SearchRun) -> StreamingHttpResponse:
    """The pulls export as a streamed download ."""
    response = StreamingHttpResponse(
        stream_pulls_jsonl(run), content_type="application/x-ndjson; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="search-run-{run.pk}-pulls.jsonl"'
    return response


def top_k_json_response(run: SearchRun) -> HttpResponse:
    """The top-k export as a download ."""
    body = json.dumps(top_k_document(run), ensure_ascii=False, indent=2)
    response = HttpResponse(body, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="search-run-{run.pk}-top-k.json"'
    return response
