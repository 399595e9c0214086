"""The two measures added beside seed 000 App. A's (ranking.discrimination): power against the
full set's order, Zouhar et al. (2025a)'s stepwise cluster count, and one subset's point."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy import stats

from ranking import discrimination as rd
from ranking import stats as rs


def test_stepwise_clusters_open_a_cluster_where_its_head_beats_the_system():
    # a > b not significant, a > c significant, c > d not, c > e significant.
    p = np.full((5, 5), 0.5)
    p[0, 2] = p[0, 3] = p[0, 4] = 0.01
    p[2, 4] = 0.02
    p[1, 2] = 0.01  # b beats c too, but b is not a head: it does not count

    assert rd.stepwise_clusters(p, [0, 1, 2, 3, 4]) == 3  # {a, b} {c, d} {e}
    assert rd.stepwise_clusters(p, [0, 1, 2, 3, 4], alpha=0.015) == 2  # {a, b} {c, d, e}
    p[0, 2] = np.nan  # untested: not significant
    assert rd.stepwise_clusters(p, [0, 1, 2, 3, 4]) == 2  # {a, b, c}: a's next win is d


def test_stepwise_counts_boundaries_wmt_rule_does_not():
    # a beats c, but neither a nor b beats b or c respectively: WMT draws no boundary.
    p = np.full((3, 3), 0.5)
    p[0, 2] = 0.001

    assert rd.stepwise_clusters(p, [0, 1, 2]) == 2
    assert rs.wmt_clusters(p, [0, 1, 2]).max() == 1


def test_power_against_the_full_order_is_the_mean_wilcoxon_p_of_full_set_neighbours():
    rng = np.random.default_rng(5)
    base = rng.normal(70, 10, 40)
    scores = np.vstack([base + shift + rng.normal(0, 4, 40) for shift in (0.0, 6.0, 3.0, -2.0)])
    full = rs.rank_systems(scores, list("abcd"))  # order: b, c, a, d
    subset = np.arange(0, 40, 2)
    ranked_rows = full.input_order

    d = rd.discrimination(scores, subset, full=full)

    expected = [
        stats.wilcoxon(scores[upper, subset], scores[lower, subset], alternative="greater").pvalue
        for upper, lower in itertools.pairwise(ranked_rows)
    ]
    assert list(ranked_rows) == [1, 2, 0, 3]
    assert d.mean_adjacent_p_full_order == pytest.approx(np.mean(expected))


def test_a_subset_that_reverses_close_neighbours_has_low_own_order_p_but_not_full_order_p():
    # b is 1 point above a over the whole set; on the chosen half a is 3 points above b.
    n = 60
    rng = np.random.default_rng(9)
    a = rng.normal(70, 5, n)
    b = a + np.where(np.arange(n) < n // 2, -3.0, 5.0) + rng.normal(0, 0.5, n)
    scores = np.vstack([a, b])
    full = rs.rank_systems(scores, ["a", "b"])
    assert full.systems == ["b", "a"]

    d = rd.discrimination(scores, np.arange(n // 2), full=full)

    assert d.mean_adjacent_p < 0.01  # its own order: a above b, and a is clearly better
    assert d.mean_adjacent_p_full_order > 0.99  # b is not better than a on this subset


def test_subset_point_compares_a_fixed_subset_with_random_subsets_of_its_size():
    rng = np.random.default_rng(1)
    scores = rng.normal(70, 10, (4, 50)) + np.array([[6.0], [4.0], [2.0], [0.0]])
    full = rs.rank_systems(scores, list("abcd"))

    point = rd.subset_point(
        scores, [3, 7, 11, 19, 23], full=full, n_random=4, rng=np.random.default_rng(0),
        test="permutation", n_resamples=99,
    )  # fmt: skip

    parsed = json.loads(json.dumps(point, allow_nan=False))
    assert parsed["size"] == 5 and parsed["fraction"] == pytest.approx(0.1)
    assert set(parsed["subset"]) == set(parsed["random_mean"]) == set(rd.FIELDS)
    assert parsed["subset"]["n_clusters"] >= 1 and parsed["random_sd"]["kendall_tau"] >= 0
    with pytest.raises(ValueError, match="must not repeat"):
        rd.subset_point(scores, [3, 3], full=full, rng=np.random.default_rng(0))
