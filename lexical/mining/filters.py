"""From the one-to-many map to concepts (seed 004 App. B.1, after Chaudhary et al. 2021).

1. keep the variations (target lemmas) a source word ⟨l_x, t_x⟩ is aligned to at least
   ``min_variation_count`` times;
2. keep the source words left with at least ``min_variations`` such variations;
3. compute p(v_i | l_x, t_x) = n_i / Σ_j n_j over those variations and the entropy
   H(l_x, t_x) = Σ_j −p(v_j | l_x, t_x) · log_e p(v_j | l_x, t_x), and drop the source words
   with H < ``min_entropy``;
4. the polysemy (WSD) filter, when one is plugged in, drops the variations that belong to
   another sense of the source word; off by default (the paper uses EWISER, which needs model
   weights), then step 2 again.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

__all__ = [
    "ConceptCandidate",
    "FilterStats",
    "PolysemyFilter",
    "conditional_probabilities",
    "entropy",
    "filter_concepts",
]

SourceKey = tuple[str, str]  # (lemma, POS)


def conditional_probabilities(counts: Sequence[int]) -> list[float]:
    """p(v_i | l_x, t_x) = n_i / Σ_j n_j."""
    total = sum(counts)
    if total <= 0:
        raise ValueError("the counts must add up to more than zero")
    return [n / total for n in counts]


def entropy(counts: Sequence[int]) -> float:
    """H(l_x, t_x) = Σ_j −p_j log_e p_j, in nats (ln 2 ≈ 0.693 for two equal variations)."""
    return sum(-p * math.log(p) for p in conditional_probabilities(counts) if p > 0)


@dataclass
class ConceptCandidate:
    lemma: str
    pos: str
    # (target lemma, count), most frequent first.
    variations: list[tuple[str, int]]
    entropy: float

    @property
    def total_count(self) -> int:
        return sum(n for _, n in self.variations)

    @property
    def key(self) -> SourceKey:
        return (self.lemma, self.pos)


class PolysemyFilter(Protocol):
    """Which variations of a concept belong to its most frequent word sense (App. B.1, last
    step). Returns the target lemmas to keep; the others are dropped."""

    name: str

    def keep(self, concept: ConceptCandidate) -> list[str]: ...


@dataclass
class FilterStats:
    candidates: int = 0  # source words aligned to at least one target lemma
    after_count_filter: int = 0  # ... with at least one variation seen min_variation_count times
    after_variations_filter: int = 0
    after_entropy_filter: int = 0
    after_polysemy_filter: int = 0
    polysemy_filter: str = "off"
    variations_kept: int = 0

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def filter_concepts(
    links: Mapping[tuple[str, str, str], int],
    *,
    min_variation_count: int = 50,
    min_variations: int = 2,
    min_entropy: float = 0.69,
    polysemy: PolysemyFilter | None = None,
) -> tuple[list[ConceptCandidate], FilterStats]:
    """Concepts from link counts keyed (source lemma, POS, target lemma); see the module doc."""
    by_source: dict[SourceKey, dict[str, int]] = defaultdict(dict)
    for (lemma, pos, target), n in links.items():
        if n > 0:
            by_source[(lemma, pos)][target] = n
    stats = FilterStats(candidates=len(by_source))
    if polysemy is not None:
        stats.polysemy_filter = polysemy.name
    concepts = []
    for (lemma, pos), targets in by_source.items():
        frequent = sorted(
            ((t, n) for t, n in targets.items() if n >= min_variation_count),
            key=lambda item: (-item[1], item[0]),
        )
        if not frequent:
            continue
        stats.after_count_filter += 1
        if len(frequent) < min_variations:
            continue
        stats.after_variations_filter += 1
        h = entropy([n for _, n in frequent])
        if h < min_entropy:
            continue
        stats.after_entropy_filter += 1
        concept = ConceptCandidate(lemma, pos, frequent, h)
        if polysemy is not None:
            keep = set(polysemy.keep(concept))
            concept.variations = [(t, n) for t, n in frequent if t in keep]
            if len(concept.variations) < min_variations:
                continue
            concept.entropy = entropy([n for _, n in concept.variations])
        stats.after_polysemy_filter += 1
        concepts.append(concept)
    concepts.sort(key=lambda c: (c.lemma, c.pos))
    stats.variations_kept = sum(len(c.variations) for c in concepts)
    return concepts, stats
