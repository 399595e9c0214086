"""Subset discriminability (ranking.discrimination, seed 000 App. A) on synthetic score tables."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from ranking import discrimination as rd
from ranking import stats as rs


@pytest.fixture
def world():
    """Six systems x 300 segments on a 0-100 scale; skill shows mostly on difficult segments.

    Rows are not in skill order, so the ranking must map ranks back to rows.
    """
    rng = np.random.default_rng(12)
    hardness = rng.uniform(0, 1, 300)
    skill = np.array([0.3, 1.0, 0.0, 0.8, 0.5, 0.6])
    noise = rng.normal(0, 6, (6, 300))
    x = 95 - 40 * hardness + 20 * skill[:, None] * hardness**2 + noise
    x[4, :15] = np.nan  # a system missing from some segments
    return np.clip(x, 0, 100)


def test_the_full_set_against_itself(world):
    full = rs.rank_systems(world, list("abcdef"))

    d = rd.discrimination(world, np.arange(300), full=full)

    assert d.kendall_tau == pytest.approx(1.0)
    assert d.spa == pytest.approx(1.0)
    assert d.n_clusters == full.clusters.max()
    assert d.mean_adjacent_gap == pytest.approx((full.means[0] - full.means[-1]) / 5)
    column_means = np.nanmean(world, axis=0)
    assert d.mean_difficulty == pytest.approx(np.mean(100 - column_means))
    adjacent = [full.p_values[k, k + 1] for k in range(5)]
    assert d.mean_adjacent_p == pytest.approx(np.mean(adjacent))


def test_a_subset_by_hand(world):
    full = rs.rank_systems(world, list("abcdef"))
    subset = np.arange(0, 300, 3)
    difficulty = np.linspace(0, 1, 300)

    d = rd.discrimination(world, subset, full=full, difficulty=difficulty)

    ranked = world[full.input_order][:, subset]
    p = rs.wilcoxon_pvalues(ranked)
    means = np.nanmean(ranked, axis=1)
    spa = np.mean(
        [1 - abs(p[i, j] - full.p_values[i, j]) for i, j in itertools.combinations(range(6), 2)]
    )
    assert d.spa == pytest.approx(spa)
    assert d.kendall_tau == pytest.approx(stats.kendalltau(full.means, means).statistic)
    assert d.mean_difficulty == pytest.approx(difficulty[subset].mean())
    order = np.argsort(-means, kind="stable")
    assert d.mean_adjacent_p == pytest.approx(np.mean(p[order[:-1], order[1:]]))
    assert d.n_clusters == rs.wmt_clusters(p, order).max()


def test_the_hardest_quarter_separates_systems_better_than_random_quarters(world):
    full = rs.rank_systems(world, list("abcdef"))
    hardest_first = np.argsort(np.nanmean(world, axis=0), kind="stable")  # the human oracle

    curve = rd.subset_curve(
        world, hardest_first, (0.25,), n_random=8, rng=np.random.default_rng(3), full=full
    )

    point = curve["points"][0]
    assert point["size"] == 75
    band_mean, band_sd = point["random_mean"], point["random_sd"]
    assert point["subset"]["n_clusters"] > band_mean["n_clusters"]
    assert point["subset"]["mean_adjacent_p"] < band_mean["mean_adjacent_p"]
    assert (
        point["subset"]["mean_difficulty"]
        > band_mean["mean_difficulty"] + band_sd["mean_difficulty"]
    )


def test_subset_curve_is_json_safe_and_has_a_band_per_fraction(world):
    order = np.arange(300)[::-1]

    curve = rd.subset_curve(
        world,
        order,
        (0.05, 0.5),
        n_random=3,
        rng=np.random.default_rng(0),
        test="permutation",
        n_resamples=50,
    )

    parsed = json.loads(json.dumps(curve, allow_nan=False))
    assert [p["size"] for p in parsed["points"]] == [15, 150]
    assert parsed["test"] == "permutation" and parsed["n_random"] == 3
    for point in parsed["points"]:
        assert set(point["subset"]) == set(rd.FIELDS)
        assert set(point["random_mean"]) == set(point["random_sd"]) == set(rd.FIELDS)
    assert parsed["full"]["kendall_tau"] == pytest.approx(1.0)


def test_undefined_measures_are_nan_and_none_in_json():
    scores = np.array([[80.0, 70.0, 60.0]])  # one system: nothing to compare
    full = rs.rank_systems(scores, ["only"])

    d = rd.discrimination(scores, [0, 2], full=full)

    assert math.isnan(d.mean_adjacent_p) and math.isnan(d.kendall_tau) and math.isnan(d.spa)
    assert d.n_clusters == 1
    assert d.as_dict()["spa"] is None


@pytest.mark.parametrize(
    ("subset", "message"),
    [
        ([], "empty"),
        ([1, 1], "repeat"),
        ([0, 300], "within"),
        ([0.5, 1.5], "indices"),
        (np.ones(5, dtype=bool), "one entry per segment"),
    ],
)
def test_bad_subsets_are_refused(world, subset, message):
    full = rs.rank_systems(world, list("abcdef"))

    with pytest.raises(ValueError, match=message):
        rd.discrimination(world, subset, full=full)


def test_a_ranking_of_other_scores_is_refused(world):
    other = rs.rank_systems(world[:3], list("abc"))

    with pytest.raises(ValueError, match="input_order"):
        rd.discrimination(world, [0, 1, 2], full=other)
    with pytest.raises(ValueError, match="fractions"):
        rd.subset_curve(world, np.arange(300), (0.0,), rng=np.random.default_rng(0))
