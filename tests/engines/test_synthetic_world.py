"""engines.offline.synthetic_world: the generative process of seed 000 §3.3. No database."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.offline.synthetic_world import SyntheticWorld


def test_means_are_reproducible_from_the_seed() -> None:
    a, b = SyntheticWorld(1_000, seed=4), SyntheticWorld(1_000, seed=4)
    np.testing.assert_array_equal(a.true_means, b.true_means)
    assert not np.array_equal(a.true_means, SyntheticWorld(1_000, seed=5).true_means)
    assert a.true_means.dtype == np.float32


def test_calibration_matches_the_paper_at_3200_topics() -> None:
    """Seed 000 Fig. 2: top-1 about 36, top-10 about 25 at |T| = 3.2k (mean of 40 worlds)."""
    worlds = [SyntheticWorld(3_200, seed=s) for s in range(40)]
    top1 = np.mean([w.value_of(w.oracle_top_k(1)) for w in worlds])
    top10 = np.mean([w.value_of(w.oracle_top_k(10)) for w in worlds])
    assert top1 == pytest.approx(36.0, abs=2.0)
    assert top10 == pytest.approx(25.0, abs=1.0)


def test_oracle_top_k_is_sorted_best_first() -> None:
    world = SyntheticWorld(5_000, seed=1)
    top = world.oracle_top_k(10)
    means = world.true_means[top]
    assert np.all(np.diff(means) <= 0)
    assert means[-1] >= np.sort(world.true_means)[-10]
    assert world.oracle_top_k(10_000).shape == (5_000,)


def test_difficulty_of_is_a_pure_function_of_topic_and_draw() -> None:
    world = SyntheticWorld(100, seed=2)
    first = world.difficulty_of(np.array([3, 3, 7]), np.array([0, 1, 0]))
    again = world.difficulty_of(np.array([7, 3]), np.array([0, 1]))
    assert first[2] == again[0] and first[1] == again[1]
    assert first[0] != first[1]
    other_seed = SyntheticWorld(100, seed=3).difficulty_of(np.array([3]), np.array([0]))
    assert other_seed[0] != first[0]
    with pytest.raises(IndexError):
        world.difficulty_of(100, 0)


def test_difficulty_noise_is_normal_with_the_configured_sd() -> None:
    world = SyntheticWorld(200, seed=0, noise_sd=15.0)
    topics = np.repeat(np.arange(200), 500)
    draws = np.tile(np.arange(500), 200)
    residual = world.difficulty_of(topics, draws) - world.true_means[topics]
    assert residual.mean() == pytest.approx(0.0, abs=0.15)
    assert residual.std() == pytest.approx(15.0, rel=0.01)
    assert np.mean(np.abs(residual) > 2 * 15.0) == pytest.approx(0.0455, abs=0.004)


def test_sample_uses_the_injected_generator() -> None:
    world = SyntheticWorld(50, seed=0)
    a = world.sample(np.arange(50), np.random.default_rng(1))
    b = world.sample(np.arange(50), np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)
    assert np.abs(a - world.true_means).max() < 15.0 * 5


def test_round_trip_through_json() -> None:
    world = SyntheticWorld(300, seed=9, noise_sd=10.0)
    copy = SyntheticWorld.from_dict(json.loads(json.dumps(world.to_dict())))
    assert copy == world
    np.testing.assert_array_equal(copy.true_means, world.true_means)


def test_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError):
        SyntheticWorld(0)
    with pytest.raises(ValueError):
        SyntheticWorld(10, weights=(0.5, 0.6, -0.1))
    with pytest.raises(ValueError):
        SyntheticWorld(10, weights=(1.0,), locs=(0.0, 1.0), scales=(1.0,))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 500), seed=st.integers(0, 2**32), k=st.integers(1, 20))
def test_oracle_is_the_best_possible_set(n: int, seed: int, k: int) -> None:
    world = SyntheticWorld(n, seed=seed)
    top = world.oracle_top_k(k)
    assert top.shape[0] == min(k, n)
    assert world.value_of(top) == pytest.approx(
        float(np.sort(world.true_means.astype(np.float64))[::-1][: min(k, n)].mean()), rel=1e-6
    )
