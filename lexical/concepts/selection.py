"""Example selection for lexical-selection studies (seed 004 App. A.2), pure Python + numpy.

The paper samples "up to 20 concepts for each target language and gather[s] 10 sentence pairs
per concept, ensuring that each variation is represented at least once. [...] For languages
with more than 20 extracted concepts, we first filter for concepts that have a roughly uniform
distribution over variations [...] Concepts are discarded if any individual variation deviates
by more than 20% from a uniform distribution. After filtering, we uniformly sample 20 concepts."

:func:`select_examples` does that, for one language pair at a time, in four steps:

1. **Qualify.** A concept needs at least two variations, at most ``pairs_per_concept`` of them
   (otherwise not every one fits), a positive total count, and at least one example per
   variation. Concepts that fail are skipped with the reason (:attr:`Selection.skipped`).
2. **Uniformity filter** (only when more than ``max_concepts`` qualify). With ``k`` variations
   and relative frequencies ``p_v = count_v / sum(count)``, a concept is discarded when some
   ``|p_v - 1/k| > tolerance``. "Deviates by more than 20%" is read as an *absolute* difference
   of 0.20 in relative frequency (not 20% of 1/k); a deviation of exactly ``tolerance`` is kept.
   If the filter leaves ``max_concepts`` or fewer, those are all taken (the paper discards the
   others, it does not top up with non-uniform concepts).
3. **Sample concepts** uniformly without replacement, ``max_concepts`` of them.
4. **Sample pairs per concept**: one example of every variation first, then the rest of the
   ``pairs_per_concept`` uniformly from the concept's remaining examples (any variation). A
   concept with fewer examples than that contributes all of them. Pairs are then shuffled so
   the order reveals nothing about how they were drawn.

Everything is drawn from one injected ``numpy.random.Generator`` over inputs sorted by id, so
the same seed and the same concepts give the same selection whatever order they were listed in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Candidate",
    "PickedConcept",
    "Selection",
    "SelectionParams",
    "select_examples",
    "uniformity_deviation",
]

# Relative frequencies are sums of float divisions: 0.7 - 0.5 is 0.19999999999999996 and
# 0.3 - 0.5 is -0.2; a deviation equal to the tolerance up to rounding counts as equal.
_EPSILON = 1e-9


@dataclass(frozen=True)
class SelectionParams:
    max_concepts: int = 20
    pairs_per_concept: int = 10
    tolerance: float = 0.20

    def __post_init__(self) -> None:
        if self.max_concepts < 1:
            raise ValueError("max_concepts must be at least 1")
        if self.pairs_per_concept < 2:
            raise ValueError("pairs_per_concept must be at least 2 (a concept has 2 variations)")
        if not 0 <= self.tolerance <= 1:
            raise ValueError("tolerance must be between 0 and 1")

    def as_dict(self) -> dict[str, float | int]:
        return {
            "max_concepts": self.max_concepts,
            "pairs_per_concept": self.pairs_per_concept,
            "uniformity_tolerance": self.tolerance,
        }


@dataclass(frozen=True)
class Candidate:
    """A concept offered for selection: its (non-dropped) variations' counts and example ids,
    both keyed by variation id."""

    concept_id: int
    counts: Mapping[int, int]
    examples: Mapping[int, Sequence[int]]


@dataclass(frozen=True)
class PickedConcept:
    concept_id: int
    example_ids: list[int]


@dataclass(frozen=True)
class Selection:
    concepts: list[PickedConcept]
    qualified: int  # concepts that passed step 1
    uniformity_filter_applied: bool
    # concept id -> why it was not selected (step 1 or the uniformity filter); concepts that
    # qualified and passed the filter but lost the draw are not listed.
    skipped: dict[int, str] = field(default_factory=dict)

    @property
    def example_ids(self) -> list[int]:
        return [example for concept in self.concepts for example in concept.example_ids]


def uniformity_deviation(counts: Iterable[int]) -> float:
    """The largest ``|count_v / total - 1/k|`` over the ``k`` variations (0 for uniform)."""
    values = np.asarray(list(counts), dtype=float)
    if values.size == 0 or values.sum() <= 0:
        raise ValueError("no counts")
    shares = values / values.sum()
    return float(np.max(np.abs(shares - 1.0 / values.size)))


def _why_not_qualified(candidate: Candidate, params: SelectionParams) -> str | None:
    variations = sorted(candidate.counts)
    if len(variations) < 2:
        return f"{len(variations)} variation(s); a concept needs at least 2"
    if len(variations) > params.pairs_per_concept:
        return (
            f"{len(variations)} variations do not fit in {params.pairs_per_concept} pairs "
            "with every variation at least once"
        )
    if any(candidate.counts[v] < 0 for v in variations) or sum(candidate.counts.values()) <= 0:
        return "its variations have no occurrences"
    missing = [v for v in variations if not candidate.examples.get(v)]
    if missing:
        return f"variation(s) {', '.join(f'#{v}' for v in missing)} have no example sentence"
    return None


def _pick_pairs(candidate: Candidate, pairs: int, rng: np.random.Generator) -> list[int]:
    chosen: list[int] = []
    rest: list[int] = []
    for variation in sorted(candidate.counts):
        examples = sorted(set(candidate.examples[variation]))
        first = int(rng.integers(len(examples)))
        chosen.append(examples[first])
        rest.extend(examples[:first] + examples[first + 1 :])
    rest.sort()
    extra = min(pairs - len(chosen), len(rest))
    if extra > 0:
        chosen.extend(rest[i] for i in sorted(rng.choice(len(rest), size=extra, replace=False)))
    return [chosen[i] for i in rng.permutation(len(chosen))]


def select_examples(
    candidates: Iterable[Candidate], params: SelectionParams, rng: np.random.Generator
) -> Selection:
    """Concepts and sentence pairs for one language pair's study (App. A.2; see the module)."""
    ordered = sorted(candidates, key=lambda c: c.concept_id)
    if len({c.concept_id for c in ordered}) != len(ordered):
        raise ValueError("a concept is offered twice")
    skipped: dict[int, str] = {}
    qualified: list[Candidate] = []
    for candidate in ordered:
        reason = _why_not_qualified(candidate, params)
        if reason:
            skipped[candidate.concept_id] = reason
        else:
            qualified.append(candidate)
    pool = qualified
    filtered = len(qualified) > params.max_concepts
    if filtered:
        pool = []
        for candidate in qualified:
            deviation = uniformity_deviation(candidate.counts[v] for v in sorted(candidate.counts))
            if deviation > params.tolerance + _EPSILON:
                skipped[candidate.concept_id] = (
                    f"not uniform enough: a variation's share is {deviation:.3f} away from "
                    f"uniform (tolerance {params.tolerance:.2f})"
                )
            else:
                pool.append(candidate)
    if len(pool) > params.max_concepts:
        drawn = sorted(rng.choice(len(pool), size=params.max_concepts, replace=False))
        pool = [pool[i] for i in drawn]
    picked = [
        PickedConcept(c.concept_id, _pick_pairs(c, params.pairs_per_concept, rng)) for c in pool
    ]
    return Selection(
        concepts=picked,
        qualified=len(qualified),
        uniformity_filter_applied=filtered,
        skipped=skipped,
    )
