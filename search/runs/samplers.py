"""Where a pull's text comes from: an imported corpus, a chat engine, or a synthetic world.

Each sampler turns the arms a round selected into :class:`Draw` s. Draws are deterministic given
what the database held when the round started (run seed, round index, slot, samples already
used by the run), so a round that a killed worker re-runs draws the same texts and every
engine call it repeats is a cache hit.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engines.interfaces import PermanentEngineError
from engines.offline.synthetic_adapters import synthetic_id
from engines.registry import resolve
from search.models import Pull, SearchRun, TextSample, Topic
from search.topics.prompts import (
    SAMPLING_PROMPT_VERSION,
    ModelOutputError,
    parse_snippets,
    sampling_messages,
)
from search.topics.services import add_samples

__all__ = ["Draw", "SamplerError", "draw_texts"]

# Snippets asked for per sampling request; more than one pull's worth keeps requests rare.
SNIPPETS_PER_REQUEST = 5
# Requests per topic before the sampler gives up finding texts the run has not used yet.
MAX_REQUESTS_PER_TOPIC = 20


class SamplerError(PermanentEngineError):
    """No text can be drawn for a topic (permanent: re-running will not help)."""


@dataclass(frozen=True)
class Draw:
    arm: int
    text: str
    topic: Topic | None = None
    sample: TextSample | None = None


def draw_texts(run: SearchRun, arms: np.ndarray, pulled: np.ndarray | None = None) -> list[Draw]:
    """One text per selected arm (repeats of an arm get different texts while any are left).

    ``pulled`` (optional, aligned with ``arms``) is how many pulls each arm already had, as the
    bandit counts them; the synthetic sampler otherwise counts the run's pull rows.
    """
    if run.sampler == SearchRun.Sampler.SYNTHETIC:
        return _synthetic(run, arms, pulled)
    topics = _topics_by_arm(run, arms)
    if run.sampler == SearchRun.Sampler.LLM:
        _top_up_from_engine(run, arms, topics)
    return _from_samples(run, arms, topics)


def _synthetic(run: SearchRun, arms: np.ndarray, pulled: np.ndarray | None) -> list[Draw]:
    """Text ids ``synthetic:<arm>:<draw>``; the draw number is the arm's pull number, mixed
    with the run seed so two runs over one world see different texts."""
    if pulled is None:
        rows = Pull.objects.filter(run=run, arm__in={int(a) for a in arms})
        previous = Counter(rows.values_list("arm", flat=True))
    else:
        previous = Counter({int(a): int(n) for a, n in zip(arms, pulled, strict=True)})
    draws = []
    for arm in (int(a) for a in arms):
        number = previous[arm]
        previous[arm] += 1
        draw = (run.seed * 1_000_003 + number) % 2**32
        draws.append(Draw(arm=arm, text=synthetic_id(arm, draw)))
    return draws


def _topics_by_arm(run: SearchRun, arms: np.ndarray) -> dict[int, Topic]:
    wanted = {int(a) for a in arms}
    topics = {
        t.arm: t
        for t in Topic.objects.filter(tree_id=run.tree_id, arm__in=wanted)
        if t.arm is not None  # arm__in already leaves out topics without an arm
    }
    missing = wanted - topics.keys()
    if missing:
        raise SamplerError(f"tree {run.tree_id} has no leaf topic for arm(s) {sorted(missing)[:5]}")
    return topics


def _used_sample_ids(run: SearchRun, topic_ids: Sequence[int]) -> set[int]:
    rows = Pull.objects.filter(run=run, topic_id__in=topic_ids, sample__isnull=False)
    return set(rows.values_list("sample_id", flat=True))


def _unused_samples(run: SearchRun, topic_ids: Sequence[int]) -> dict[int, list[int]]:
    """Sample ids per topic, oldest first, without those this run already pulled."""
    used = _used_sample_ids(run, topic_ids)
    by_topic: dict[int, list[int]] = defaultdict(list)
    rows = TextSample.objects.filter(topic_id__in=topic_ids).order_by("id")
    for sample_id, topic_id in rows.values_list("id", "topic_id"):
        if sample_id not in used:
            by_topic[topic_id].append(sample_id)
    return by_topic


def _top_up_from_engine(run: SearchRun, arms: np.ndarray, topics: dict[int, Topic]) -> None:
    """Ask the chat engine for fresh snippets for topics the round needs more texts of."""
    needed = Counter(int(a) for a in arms)
    for attempt in range(MAX_REQUESTS_PER_TOPIC):
        unused = _unused_samples(run, [t.pk for t in topics.values()])
        short = [topics[arm] for arm, n in needed.items() if len(unused[topics[arm].pk]) < n]
        if not short:
            return
        requests = [_next_request(topic, attempt) for topic in short]
        engine = run.sampler_engine
        assert engine is not None  # the LLM sampler always has its chat engine
        chat = resolve(engine, "chat", run.scope)
        language = run.tree.language if run.tree else run.src_lang
        answers = chat.complete_many(
            [sampling_messages(t.path, language, SNIPPETS_PER_REQUEST, n) for t, n in requests]
        )
        added = 0
        for (topic, number), answer in zip(requests, answers, strict=True):
            try:
                snippets = parse_snippets(answer.text)
            except ModelOutputError:
                snippets = []  # counted as an empty request; the next one asks again
            detail = {
                "engine": engine.name,
                "prompt_version": SAMPLING_PROMPT_VERSION,
                "request": number,
                "run": run.pk,
            }
            added += add_samples(topic, snippets, detail)
        if not added and attempt >= 2:
            break
    unused = _unused_samples(run, [t.pk for t in topics.values()])
    short_names = [t.path for t in topics.values() if not unused[t.pk]]
    if short_names:
        raise SamplerError(
            f"the sampler engine gave no usable snippets for {short_names[0]!r} "
            f"after {MAX_REQUESTS_PER_TOPIC} requests"
        )


def _next_request(topic: Topic, attempt: int) -> tuple[Topic, int]:
    """The number of the next sampling request for a topic. It is part of the prompt, so each
    request is a new cache entry and a round that is re-run repeats its requests for free."""
    done = topic.samples.filter(origin=TextSample.Origin.LLM).values_list(
        "origin_detail__request", flat=True
    )
    return topic, max([-1, *[d for d in done if isinstance(d, int)]]) + 1 + attempt


def _from_samples(run: SearchRun, arms: np.ndarray, topics: dict[int, Topic]) -> list[Draw]:
    """Pick unused samples at random (seeded by run and round); reuse when a topic runs out."""
    topic_ids = [t.pk for t in topics.values()]
    samples = {s.pk: s for s in TextSample.objects.filter(topic_id__in=topic_ids).order_by("id")}
    used = _used_sample_ids(run, topic_ids)
    every: dict[int, list[int]] = defaultdict(list)
    unused: dict[int, list[int]] = defaultdict(list)
    for sample in samples.values():  # oldest first
        every[sample.topic_id].append(sample.pk)
        if sample.pk not in used:
            unused[sample.topic_id].append(sample.pk)
    rng = np.random.default_rng([run.seed & 0x7FFFFFFF, run.round_index])
    draws = []
    for arm in (int(a) for a in arms):
        topic = topics[arm]
        pool = unused[topic.pk] or every[topic.pk]
        if not pool:
            raise SamplerError(f"topic {topic.path!r} has no text samples")
        sample_id = (
            pool.pop(int(rng.integers(len(pool))))
            if unused[topic.pk]
            else pool[int(rng.integers(len(pool)))]
        )
        sample = samples[sample_id]
        draws.append(Draw(arm=arm, text=sample.text, topic=topic, sample=sample))
    return draws
