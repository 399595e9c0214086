"""Where MT-breaker seeds come from, sampled reproducibly (the sampling seed is stored).

A seed spec is a JSON object: ``{"from": "search_run", "run": id, "top_k": 10}`` (the texts
drawn for a search run's current top-k topics), ``{"from": "topic_tree", "tree": name or id}``,
``{"from": "dataset", "dataset": name or id}`` (a difficulty dataset's distinct sources), or
``{"from": "jsonl", "lines": "..." | [...], "file": "name"}`` (``{"text", "source_url"?,
"doc_id"?}`` per line); plus ``"n"`` (how many to sample; all when absent) and
``"sample_seed"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from difficulty.models import DifficultyDataset, DifficultySegment
from formats.jsonl import LineProblem, read_jsonl
from search.models import Pull, SearchRun, TextSample, TopicTree
from search.runs.selectors import top_topics

__all__ = ["SOURCES", "Seed", "SeedError", "load_seeds"]

SOURCES = ("search_run", "topic_tree", "dataset", "jsonl")
MAX_SEEDS = 10_000


@dataclass(frozen=True)
class Seed:
    text: str
    ref: dict[str, Any]


class SeedError(ValueError):
    """The seed spec names nothing usable; the message says what is wrong."""


def _lookup(model, value: Any, what: str):
    text = str(value if value is not None else "").strip()
    found = model.objects.filter(pk=int(text)).first() if text.isdigit() else None
    found = found or model.objects.filter(name=text).first()
    if found is None:
        raise SeedError(f"there is no {what} {value!r}")
    return found


def _from_search_run(spec: dict) -> list[Seed]:
    run = SearchRun.objects.filter(pk=spec.get("run") or 0).first()
    if run is None:
        raise SeedError(f"there is no search run {spec.get('run')!r}")
    rows = top_topics(run, int(spec.get("top_k") or run.k))
    arms = {row.arm: row.name for row in rows}
    seeds, seen = [], set()
    pulls = Pull.objects.filter(run=run, arm__in=list(arms)).select_related("sample")
    for pull in pulls.order_by("-difficulty", "id"):
        if pull.text in seen or pull.text.startswith("synthetic:"):
            continue
        seen.add(pull.text)
        url = pull.sample.source_url if pull.sample else ""
        ref = {"origin": "search_run", "run": run.pk, "pull": pull.pk, "topic": arms[pull.arm]}
        seeds.append(Seed(pull.text, {**ref, "source_url": url}))
    return seeds


def _from_topic_tree(spec: dict) -> list[Seed]:
    tree = _lookup(TopicTree, spec.get("tree"), "topic tree")
    samples = TextSample.objects.filter(topic__tree=tree).select_related("topic").order_by("id")
    return [
        Seed(
            s.text,
            {
                "origin": "topic_tree",
                "tree": tree.pk,
                "sample": s.pk,
                "topic": s.topic.path,
                "source_url": s.source_url,
            },
        )
        for s in samples
    ]


def _from_dataset(spec: dict) -> list[Seed]:
    dataset = _lookup(DifficultyDataset, spec.get("dataset"), "difficulty dataset")
    seeds, seen = [], set()
    for segment in DifficultySegment.objects.filter(dataset=dataset).order_by("id"):
        if segment.source_key in seen:
            continue
        seen.add(segment.source_key)
        ref = {"origin": "dataset", "dataset": dataset.pk, "segment": segment.pk}
        seeds.append(Seed(segment.source, {**ref, "doc_id": segment.doc_id}))
    return seeds


def _from_jsonl(spec: dict) -> list[Seed]:
    lines = spec.get("lines")
    if isinstance(lines, list):
        lines = "\n".join(str(line) for line in lines)
    if not isinstance(lines, str | bytes):
        raise SeedError("a JSONL seed spec needs 'lines' (the file's content)")
    seeds, problems = [], []
    for number, value in read_jsonl(lines):
        if isinstance(value, LineProblem):
            problems.append(f"line {number}: {value.reason}")
        elif not isinstance(value, dict) or not str(value.get("text") or "").strip():
            problems.append(f'line {number}: needs a non-empty "text"')
        else:
            ref = {"origin": "jsonl", "file": str(spec.get("file") or ""), "line": number}
            for key in ("source_url", "doc_id"):
                if value.get(key):
                    ref[key] = str(value[key])
            seeds.append(Seed(str(value["text"]).strip(), ref))
    if problems:
        raise SeedError("; ".join(problems[:10]))
    return seeds


_LOADERS = {
    "search_run": _from_search_run,
    "topic_tree": _from_topic_tree,
    "dataset": _from_dataset,
    "jsonl": _from_jsonl,
}


def load_seeds(spec: Any) -> list[Seed]:
    """The seeds ``spec`` describes, sampled with its ``sample_seed`` (see the module doc)."""
    if not isinstance(spec, dict) or spec.get("from") not in _LOADERS:
        raise SeedError(f'seeds need "from": one of {", ".join(SOURCES)}')
    seeds = _LOADERS[spec["from"]](spec)
    if not seeds:
        raise SeedError(f"the {spec['from']} seed source holds no texts")
    n = spec.get("n")
    if n not in (None, ""):
        if isinstance(n, bool) or not str(n).isdigit() or int(str(n)) < 1:
            raise SeedError("n must be a positive integer")
        count = int(str(n))
        if count < len(seeds):
            rng = np.random.default_rng(int(spec.get("sample_seed") or 0))
            chosen = sorted(rng.choice(len(seeds), size=count, replace=False).tolist())
            seeds = [seeds[i] for i in chosen]
    return seeds[:MAX_SEEDS]
