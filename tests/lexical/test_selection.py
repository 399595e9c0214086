"""Example selection (seed 004 App. A.2) as a pure function: no database."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from lexical.concepts.selection import (
    Candidate,
    SelectionParams,
    select_examples,
    uniformity_deviation,
)


def candidate(concept_id: int, counts: list[int], examples: list[int] | None = None) -> Candidate:
    """Variation ids ``concept_id*100 + i``; example ids ``concept_id*10000 + i*100 + j``."""
    examples = examples if examples is not None else [5] * len(counts)
    variations = [concept_id * 100 + i for i in range(len(counts))]
    return Candidate(
        concept_id=concept_id,
        counts=dict(zip(variations, counts, strict=True)),
        examples={
            v: [concept_id * 10000 + i * 100 + j for j in range(n)]
            for i, (v, n) in enumerate(zip(variations, examples, strict=True))
        },
    )


def variation_of(example_id: int) -> int:
    return example_id // 100


def run(candidates, seed=7, **params):
    return select_examples(candidates, SelectionParams(**params), np.random.default_rng(seed))


def test_every_variation_at_least_once_and_ten_pairs():
    picked = run([candidate(1, [60, 30, 10], [20, 20, 20])]).concepts[0]
    assert len(picked.example_ids) == 10 == len(set(picked.example_ids))
    assert {variation_of(e) % 100 for e in picked.example_ids} == {0, 1, 2}


def test_fewer_examples_than_pairs_takes_them_all():
    picked = run([candidate(1, [50, 50], [2, 3])]).concepts[0]
    assert sorted(picked.example_ids) == [10000, 10001, 10100, 10101, 10102]


def test_duplicate_example_ids_are_counted_once():
    dup = Candidate(1, {1: 5, 2: 5}, {1: [7, 7, 7], 2: [8]})
    assert sorted(run([dup]).concepts[0].example_ids) == [7, 8]


def test_variation_without_example_skips_the_concept_with_the_reason():
    result = run([candidate(1, [50, 50], [4, 0]), candidate(2, [50, 50])])
    assert [c.concept_id for c in result.concepts] == [2]
    assert result.skipped == {1: "variation(s) #101 have no example sentence"}


def test_unqualified_concepts_are_skipped_with_reasons():
    result = run(
        [candidate(1, [50]), candidate(2, [0, 0]), candidate(3, [1] * 11, [1] * 11)],
        pairs_per_concept=10,
    )
    assert result.concepts == [] and result.qualified == 0
    assert result.skipped[1] == "1 variation(s); a concept needs at least 2"
    assert result.skipped[2] == "its variations have no occurrences"
    assert result.skipped[3].startswith("11 variations do not fit in 10 pairs")


def test_no_filter_at_or_below_max_concepts():
    skewed = [candidate(i, [95, 5]) for i in range(1, 21)]
    result = run(skewed)
    assert not result.uniformity_filter_applied
    assert [c.concept_id for c in result.concepts] == list(range(1, 21))


def test_filter_applies_above_max_and_keeps_only_uniform_ones():
    uniform = [candidate(i, [50, 50]) for i in range(1, 6)]
    skewed = [candidate(i, [90, 10]) for i in range(6, 30)]
    result = run(uniform + skewed)
    assert result.uniformity_filter_applied and result.qualified == 29
    # The filter left 5: all taken, not topped up with skewed concepts.
    assert [c.concept_id for c in result.concepts] == [1, 2, 3, 4, 5]
    assert result.skipped[6].startswith("not uniform enough: a variation's share is 0.400")


def test_tolerance_is_an_absolute_difference_and_the_boundary_is_kept():
    # Shares 0.7/0.3 deviate by exactly 0.2 from 0.5: kept; 0.71/0.29 by 0.21: discarded.
    boundary, beyond = candidate(1, [70, 30]), candidate(2, [71, 29])
    filler = [candidate(i, [10, 90]) for i in range(3, 5)]
    result = run([boundary, beyond, *filler], max_concepts=1)
    assert result.uniformity_filter_applied
    assert [c.concept_id for c in result.concepts] == [1]
    assert set(result.skipped) == {2, 3, 4}
    # Three variations: uniform is 1/3; 0.5 deviates by 0.1667 (kept under 0.2), not 20% of 1/3.
    assert uniformity_deviation([50, 25, 25]) == pytest.approx(1 / 6)


def test_uniform_sampling_of_concepts_when_many_pass():
    many = [candidate(i, [50, 50]) for i in range(1, 41)]
    result = run(many, seed=3)
    chosen = [c.concept_id for c in result.concepts]
    assert len(chosen) == 20 == len(set(chosen)) and chosen == sorted(chosen)
    # Uniform: over many seeds each concept is drawn about half the time.
    draws = Counter(c.concept_id for seed in range(400) for c in run(many, seed=seed).concepts)
    assert set(draws) == set(range(1, 41))
    assert all(150 < n < 250 for n in draws.values())


def test_same_seed_same_selection_whatever_the_input_order():
    concepts = [candidate(i, [50 + i, 50 - i], [8, 9]) for i in range(1, 30)]
    first = run(concepts, seed=42)
    again = run(list(reversed(concepts)), seed=42)
    assert first == again
    assert run(concepts, seed=43).example_ids != first.example_ids


def test_extra_pairs_are_drawn_uniformly_from_the_remaining_examples():
    # One variation with 1 example, the other with 50: the 8 extra pairs come from the rest.
    picks = Counter()
    for seed in range(300):
        ids = run([candidate(1, [50, 50], [1, 50])], seed=seed).concepts[0].example_ids
        assert 10000 in ids and len(ids) == 10
        picks.update(e for e in ids if e != 10000)
    assert len(picks) == 50 and all(20 < n < 80 for n in picks.values())


def test_params_are_checked():
    with pytest.raises(ValueError, match="max_concepts"):
        SelectionParams(max_concepts=0)
    with pytest.raises(ValueError, match="pairs_per_concept"):
        SelectionParams(pairs_per_concept=1)
    with pytest.raises(ValueError, match="tolerance"):
        SelectionParams(tolerance=float("nan"))
    with pytest.raises(ValueError, match="offered twice"):
        run([candidate(1, [5, 5]), candidate(1, [5, 5])])
