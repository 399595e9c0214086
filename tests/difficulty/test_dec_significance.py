"""Estimator significance clusters (difficulty.dec_significance): the swapped DEC against
scipy.stats, PERM-BOTH on hand-made estimators, and Google's cluster rule on hand-made tables."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from difficulty import dec_significance as sig
from difficulty.dec import LanguagePairBlock, dec


def per_cell(block: LanguagePairBlock) -> np.ndarray:
    if block.estimate.ndim == 2:
        return block.estimate
    return np.tile(block.estimate[:, None], len(block.systems))


def zscored(values: np.ndarray) -> np.ndarray:
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else values - values.mean()


def mean_defined(values: list[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return float(np.mean(defined)) if defined else math.nan


def reference_decs(blocks_a, blocks_b, swaps: list[np.ndarray]) -> tuple[float, float]:
    """PERM-BOTH's statistic for one resample, literally: per language pair, z-score both
    estimators over the cells all three scored, swap where ``swaps`` is True, then Eq. 1 with
    the public ``scipy.stats.kendalltau`` (tau_b) per (pair, system)."""
    per_lp_a, per_lp_b = [], []
    for block_a, block_b, swapped in zip(blocks_a, blocks_b, swaps, strict=True):
        a, b = per_cell(block_a), per_cell(block_b)
        used = ~(np.isnan(block_a.human) | np.isnan(a) | np.isnan(b))
        za, zb = np.full(a.shape, np.nan), np.full(b.shape, np.nan)
        za[used], zb[used] = zscored(a[used]), zscored(b[used])
        x, y = np.where(swapped, zb, za), np.where(swapped, za, zb)
        taus_a, taus_b = [], []
        for m in range(len(block_a.systems)):
            rows = used[:, m]
            if rows.sum() >= 2:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # constant input: NaN, left out
                    human = block_a.human[rows, m]
                    taus_a.append(stats.kendalltau(x[rows, m], human).statistic)
                    taus_b.append(stats.kendalltau(y[rows, m], human).statistic)
        per_lp_a.append(mean_defined(taus_a))
        per_lp_b.append(mean_defined(taus_b))
    return mean_defined(per_lp_a), mean_defined(per_lp_b)


def tied_blocks(rng: np.random.Generator) -> tuple[list, list]:
    """Two pairs, ESA-like ties and gaps; a source-only estimator with ties, a per-cell one."""
    human_cs = rng.integers(0, 6, (9, 3)).astype(float)
    human_cs[rng.random(human_cs.shape) < 0.15] = np.nan
    human_de = rng.integers(0, 4, (7, 2)).astype(float)
    blocks_a = [
        LanguagePairBlock("en-cs", human_cs, rng.integers(0, 4, 9).astype(float), ("x", "y", "z")),
        LanguagePairBlock("en-de", human_de, rng.normal(size=(7, 2)), ("x", "w")),
    ]
    b_cs = rng.integers(0, 3, (9, 3)).astype(float)
    b_cs[0, 1] = np.nan  # the estimator left a cell unscored
    blocks_b = [blocks_a[0].with_estimate(b_cs), blocks_a[1].with_estimate(rng.normal(size=7))]
    return blocks_a, blocks_b


@pytest.mark.parametrize("slice_entries", [sig._SLICE_ENTRIES, 16])
def test_swapped_dec_equals_scipy_per_resample(monkeypatch, slice_entries):
    # 16 entries force Q to be built a row or two at a time, as for very large groups.
    monkeypatch.setattr(sig, "_SLICE_ENTRIES", slice_entries)
    rng = np.random.default_rng(7)
    blocks_a, blocks_b = tied_blocks(rng)
    swaps = [rng.random((12, *block.human.shape)) < 0.5 for block in blocks_a]

    got = sig.resampled_decs(blocks_a, blocks_b, swaps)

    for r in range(12):
        expected_a, expected_b = reference_decs(blocks_a, blocks_b, [s[r] for s in swaps])
        assert got["a"][r] == pytest.approx(expected_a, abs=1e-12)
        assert got["b"][r] == pytest.approx(expected_b, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    segments=st.integers(1, 8),
    levels=st.integers(1, 4),
    per_cell_b=st.booleans(),
)
def test_swapped_dec_equals_scipy_on_any_small_block(seed, segments, levels, per_cell_b):
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 3, (segments, 2)).astype(float)
    a = rng.integers(0, levels, segments).astype(float)
    b = rng.integers(0, levels, (segments, 2) if per_cell_b else segments).astype(float)
    blocks_a = [LanguagePairBlock("en-cs", human, a, ("x", "y"))]
    blocks_b = [blocks_a[0].with_estimate(b)]
    swaps = [rng.random((3, segments, 2)) < 0.5]

    got = sig.resampled_decs(blocks_a, blocks_b, swaps)

    for r in range(3):
        expected = reference_decs(blocks_a, blocks_b, [swaps[0][r]])
        assert got["a"][r] == pytest.approx(expected[0], abs=1e-12, nan_ok=True)
        assert got["b"][r] == pytest.approx(expected[1], abs=1e-12, nan_ok=True)


def test_without_swaps_the_statistic_is_each_estimators_dec():
    rng = np.random.default_rng(1)
    human = rng.integers(0, 101, (30, 4)).astype(float)
    blocks_a = [LanguagePairBlock("en-cs", human, rng.normal(size=30), tuple("abcd"))]
    blocks_b = [blocks_a[0].with_estimate(rng.integers(0, 5, 30).astype(float))]

    test = sig.perm_both_pair(blocks_a, blocks_b, rng=rng, n_resamples=10)

    assert test.delta == pytest.approx(dec(blocks_a).dec - dec(blocks_b).dec, abs=1e-12)
    assert test.delta_per_lp == {"en-cs": pytest.approx(test.delta, abs=1e-15)}


def estimator_world(seed: int, segments: int = 120, systems: int = 4):
    """Human scores driven by a latent difficulty, and estimators of it at chosen noise."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=segments)
    human = np.clip(
        np.round(80 - 10 * latent[:, None] + rng.normal(0, 8, (segments, systems))), 0, 100
    )
    names = tuple(f"sys{m}" for m in range(systems))

    def blocks(noise: float | None) -> list[LanguagePairBlock]:
        values = rng.random(segments) if noise is None else -latent + rng.normal(0, noise, segments)
        return [LanguagePairBlock("en-cs", human, values, names)]

    return blocks


def test_identical_estimators_are_one_cluster():
    blocks = estimator_world(0)(0.5)

    result = sig.perm_both_pvalues({"a": blocks, "b": blocks}, rng=np.random.default_rng(0))

    test = result.tests[("a", "b")]
    # Swapping equal scores changes nothing: every resample ties the observed delta of 0.
    assert (test.delta, test.at_least, test.at_most) == (0.0, test.n_resamples, test.n_resamples)
    assert result.overall.p_values[0, 1] == 1.0
    assert result.overall.ranks == (1, 1)


def test_equally_good_estimators_share_a_cluster():
    world = estimator_world(1)
    first, second = world(1.0), world(1.0)  # the same noise level, drawn independently

    result = sig.perm_both_pvalues({"a": first, "b": second}, rng=np.random.default_rng(0))

    assert result.overall.p_values[0, 1] > 0.05
    assert result.overall.ranks == (1, 1)


def test_an_oracle_beats_random_at_once():
    world = estimator_world(2)
    estimators = {"random": world(None), "oracle": world(0.1)}

    result = sig.perm_both_pvalues(estimators, rng=np.random.default_rng(0))

    assert result.overall.names == ("oracle", "random")
    assert result.overall.ranks == (1, 2)
    assert result.overall.p_values[0, 1] == 0.0
    assert result.per_lp["en-cs"].ranks == (1, 2)
    # Decided after the first block: p < 0.02 at every level.
    assert result.tests[("random", "oracle")].n_resamples == sig.BLOCK_SIZE


def test_three_estimators_rank_by_significance():
    world = estimator_world(3, segments=200)
    estimators = {
        "weak": world(3.0),
        "good": world(0.3),
        "good too": world(0.3),
        "none": world(None),
    }

    result = sig.perm_both_pvalues(estimators, rng=np.random.default_rng(0))

    ranks = dict(zip(result.overall.names, result.overall.ranks, strict=True))
    assert ranks["good"] == ranks["good too"] == 1
    assert ranks["weak"] == 2
    assert ranks["none"] == 3


def test_the_same_generator_seed_gives_the_same_p_values():
    world = estimator_world(4)
    estimators = {"a": world(1.0), "b": world(1.2)}

    first = sig.perm_both_pvalues(estimators, rng=np.random.default_rng(5))
    second = sig.perm_both_pvalues(estimators, rng=np.random.default_rng(5))

    assert first.tests == second.tests


def test_language_pairs_must_match():
    world = estimator_world(5)
    blocks = world(1.0)
    other = [LanguagePairBlock("en-de", blocks[0].human, blocks[0].estimate, blocks[0].systems)]
    changed = [
        LanguagePairBlock("en-cs", blocks[0].human + 1, blocks[0].estimate, blocks[0].systems)
    ]

    with pytest.raises(ValueError, match="same language pairs"):
        sig.perm_both_pair(blocks, other, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="different human scores"):
        sig.perm_both_pair(blocks, changed, rng=np.random.default_rng(0))


def test_a_test_survives_json_and_reads_p_values_both_ways():
    test = sig.PairTest(
        delta=0.1,
        n_resamples=400,
        at_least=6,
        at_most=398,
        delta_per_lp={"en-cs": 0.2, "en-de": math.nan},
        at_least_per_lp={"en-cs": 2, "en-de": 0},
        at_most_per_lp={"en-cs": 399, "en-de": 0},
    )

    again = sig.PairTest.from_dict(test.as_dict())

    assert again.as_dict() == test.as_dict()
    assert again.as_dict()["delta_per_lp"]["en-de"] is None
    assert again.p_value(True) == 6 / 400  # a better than b
    assert again.p_value(False) == 398 / 400
    assert again.p_value(True, "en-cs") == 2 / 400
    assert math.isnan(again.p_value(True, "en-de"))


# --- Clusters (Google's AssignRanks) ---------------------------------------------------------


def upper(rows: list[list[float]]) -> np.ndarray:
    """A p-value table from its upper triangle, one list per row."""
    n = len(rows) + 1
    table = np.full((n, n), np.nan)
    for i, row in enumerate(rows):
        table[i, i + 1 :] = row
    return table


def test_clusters_start_where_someone_in_the_current_cluster_wins():
    p = upper(
        [
            [0.30, 0.01, 0.001, 0.0],  # 0 beats 2, 3 and 4
            [0.20, 0.04, 0.0],  # 1 beats 3 and 4
            [0.45, 0.03],  # 2 starts cluster 2; 2 beats 4
            [0.10],
        ]
    )

    # 3 is beaten by 0 and 1, but they are in cluster 1: it joins 2's cluster. 4 is beaten by 2,
    # the start of its cluster, so it starts cluster 3.
    assert sig.assign_ranks(p, alpha=0.05) == [1, 1, 2, 2, 3]


def test_a_win_inside_the_cluster_counts_only_from_its_start():
    p = upper(
        [
            [0.50, 0.02, 0.01],  # 0 beats 2 and 3
            [0.40, 0.30],
            [0.20],
        ]
    )

    # 3 is beaten only by 0, from before the current cluster's start (2): same cluster as 2.
    assert sig.assign_ranks(p, alpha=0.05) == [1, 1, 2, 2]
    assert sig.assign_ranks(p, alpha=0.01) == [1, 1, 1, 2]
    assert sig.assign_ranks(np.zeros((0, 0))) == []


def test_rank_by_significance_orders_by_dec_and_leaves_undefined_out():
    p = {("b", "a"): 0.01, ("b", "c"): 0.001, ("a", "c"): 0.2}

    ranking = sig.rank_by_significance(
        {"a": 0.2, "b": 0.5, "c": 0.1, "constant": math.nan},
        lambda better, worse: p[(better, worse)],
    )

    assert ranking.names == ("b", "a", "c")
    assert ranking.ranks == (1, 2, 2)
    assert ranking.as_dict()["p_values"] == [[None, 0.01, 0.001], [None, None, 0.2], [None] * 3]
