"""The pure DEC / hardest-subset maths (difficulty.dec) against hand computations and scipy."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from difficulty import dec


def tau_b_by_definition(gold: list[float], hyp: list[float]) -> float:
    """Seed 002 App. A, Eq. 2, literally: pairs tied in both are ignored."""
    concordant = discordant = tied_gold_only = tied_hyp_only = 0
    for i, j in itertools.combinations(range(len(gold)), 2):
        dg, dh = gold[i] - gold[j], hyp[i] - hyp[j]
        if dg * dh > 0:
            concordant += 1
        elif dg * dh < 0:
            discordant += 1
        elif dg == 0 and dh != 0:
            tied_gold_only += 1
        elif dh == 0 and dg != 0:
            tied_hyp_only += 1
    return (concordant - discordant) / math.sqrt(
        (concordant + discordant + tied_gold_only) * (concordant + discordant + tied_hyp_only)
    )


def test_tau_b_matches_appendix_a_with_ties():
    gold = [100, 100, 90, 70, 70, 40, 100, 55]
    hyp = [-3, -5, -5, -8, -8, -12, -2, -12]

    assert dec.kendall_tau_b(hyp, gold) == pytest.approx(tau_b_by_definition(gold, hyp), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=3, max_size=40).filter(
        lambda pairs: len({p[0] for p in pairs}) > 1 and len({p[1] for p in pairs}) > 1
    )
)
def test_tau_b_equals_public_scipy_kendalltau(pairs):
    x = [float(a) for a, _ in pairs]
    y = [float(b) for _, b in pairs]

    expected = stats.kendalltau(x, y, variant="b").statistic

    assert dec.kendall_tau_b(x, y) == pytest.approx(expected, abs=1e-12)


def test_tau_b_drops_nan_pairs_and_is_undefined_for_constants():
    assert dec.kendall_tau_b([1, 2, np.nan, 4], [1, 3, 2, np.nan]) == pytest.approx(1.0)
    assert math.isnan(dec.kendall_tau_b([1, 1, 1], [1, 2, 3]))
    assert math.isnan(dec.kendall_tau_b([1.0], [2.0]))


def test_pearson_equals_scipy():
    rng = np.random.default_rng(3)
    x, y = rng.random(50), rng.random(50)

    assert dec.pearson_r(x, y) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert math.isnan(dec.pearson_r([2, 2, 2], [1, 2, 3]))


def test_dec_averages_systems_then_language_pairs_with_equal_weight():
    rng = np.random.default_rng(0)
    big = rng.normal(size=(40, 3))
    small = rng.normal(size=(8, 2))
    est_big, est_small = rng.normal(size=40), rng.normal(size=8)
    blocks = [
        dec.LanguagePairBlock("en-cs", big, est_big, ("a", "b", "c")),
        dec.LanguagePairBlock("en-de", small, est_small, ("a", "d")),
    ]

    result = dec.dec(blocks)

    per_cs = [stats.kendalltau(est_big, big[:, m]).statistic for m in range(3)]
    per_de = [stats.kendalltau(est_small, small[:, m]).statistic for m in range(2)]
    assert result.dec_per_lp["en-cs"] == pytest.approx(np.mean(per_cs))
    assert result.dec_per_lp["en-de"] == pytest.approx(np.mean(per_de))
    assert result.dec == pytest.approx((np.mean(per_cs) + np.mean(per_de)) / 2)
    assert result.per_system["en-de"]["d"] == pytest.approx(per_de[1])
    per_r = [stats.pearsonr(est_big, big[:, m]).statistic for m in range(3)]
    assert result.pearson_per_lp["en-cs"] == pytest.approx(np.mean(per_r))


def test_dec_leaves_out_missing_cells_and_undefined_systems():
    human = np.array([[90, 50, 70], [80, np.nan, 70], [60, 40, 70], [100, 45, 70.0]])
    estimate = np.array([3.0, 2.0, 1.0, 4.0])

    result = dec.dec([dec.LanguagePairBlock("en-cs", human, estimate, ("a", "b", "c"))])

    assert result.n_pairs["en-cs"] == {"a": 4, "b": 3, "c": 4}
    assert result.undefined == [("en-cs", "c")]  # system c scored everything 70
    expected_b = stats.kendalltau([3.0, 1.0, 4.0], [50, 40, 45]).statistic
    assert result.dec == pytest.approx((1.0 + expected_b) / 2)


def test_constant_estimator_has_undefined_dec():
    human = np.arange(12.0).reshape(6, 2)

    result = dec.dec([dec.LanguagePairBlock("en-cs", human, np.ones(6), ("a", "b"))])

    assert math.isnan(result.dec)
    assert result.as_dict()["dec"] is None


def test_estimator_equal_to_each_systems_scores_has_dec_one():
    human = np.random.default_rng(1).normal(size=(30, 4))

    result = dec.dec([dec.LanguagePairBlock("x-y", human, human.copy(), tuple("abcd"))])

    assert result.dec == pytest.approx(1.0)


def test_dec_from_arrays_equals_dec_on_blocks():
    rng = np.random.default_rng(5)
    human = rng.integers(0, 101, size=(25, 3)).astype(float)
    estimate = rng.normal(size=25)
    block = dec.LanguagePairBlock("en-cs", human, estimate, ("s1", "s2", "s3"))
    segments, systems = np.meshgrid(np.arange(25), np.arange(3), indexing="ij")
    order = rng.permutation(75)  # cells in any order

    flat = dec.dec_from_arrays(
        estimate[segments.ravel()][order],
        human.ravel()[order],
        np.array(["s1", "s2", "s3"])[systems.ravel()][order],
        np.full(75, "en-cs"),
    )

    assert flat.dec == pytest.approx(dec.dec([block]).dec, abs=1e-12)
    expected = dec.dec([block]).per_system["en-cs"]
    assert flat.per_system["en-cs"] == pytest.approx(expected, abs=1e-12)


def test_dec_from_arrays_with_one_system_is_kendall_tau():
    auto = [0.1, 0.5, 0.3, 0.9, 0.7]
    human = [20, 60, 30, 95, 50]

    result = dec.dec_from_arrays(auto, human, ["run"] * 5, ["en-cs"] * 5)

    assert result.dec == pytest.approx(stats.kendalltau(auto, human).statistic)


def test_blocks_from_arrays_refuses_a_cell_given_twice():
    with pytest.raises(ValueError, match="given twice"):
        dec.blocks_from_arrays([1, 2], [3, 4], ["a", "a"], ["x-y", "x-y"], [7, 7])


def test_bootstrap_is_reproducible_and_brackets_the_estimate():
    rng = np.random.default_rng(11)
    quality = rng.normal(size=200)
    human = quality[:, None] + rng.normal(scale=2.0, size=(200, 4))
    blocks = [dec.LanguagePairBlock("en-cs", human, quality, tuple("abcd"))]

    first = dec.bootstrap_dec(blocks, np.random.default_rng(42), 300)
    again = dec.bootstrap_dec(blocks, np.random.default_rng(42), 300)
    low, high = dec.percentile_interval(first, 0.95)

    assert np.array_equal(first, again)
    assert low < dec.dec(blocks).dec < high
    assert high - low < 0.2


def test_hardest_subset_by_hand():
    # 8 segments, 2 systems; the estimator ranks segments 5, 2 lowest (B = round(0.25 * 8) = 2).
    human = np.array(
        [[100, 100], [90, 80], [40, 100], [100, 95], [70, 60], [30, 100], [100, 100], [85, 90.0]]
    )
    estimate = np.array([9, 5, 1, 8, 4, 0, 7, 6.0])
    block = dec.LanguagePairBlock("en-cs", human, estimate, ("a", "b"))

    result = dec.hardest_subset([block], fraction=0.25)

    assert result.per_lp["en-cs"]["budget"] == 2
    assert result.avg_score == pytest.approx((30 + 100 + 40 + 100) / 4)
    assert result.pct_perfect == pytest.approx(50.0)


def test_hardest_subset_averages_language_pairs_and_uses_per_cell_means():
    a = dec.LanguagePairBlock("a-b", np.array([[10.0], [100.0]]), np.array([0.0, 1.0]), ("s",))
    # Per-cell estimates: segment 1 has the lower mean over systems.
    b = dec.LanguagePairBlock(
        "a-c",
        np.array([[100.0, 100.0], [50.0, 60.0]]),
        np.array([[0.0, 5.0], [1.0, 2.0]]),
        ("s", "t"),
    )

    result = dec.hardest_subset([a, b], fraction=0.5)

    assert result.per_lp["a-b"]["avg_score"] == 10.0
    assert result.per_lp["a-c"]["avg_score"] == 55.0
    assert result.avg_score == pytest.approx(32.5)
    assert result.pct_perfect == 0.0


@pytest.mark.parametrize(("n", "fraction", "budget"), [(297, 0.25, 74), (10, 0.25, 3), (3, 0.1, 1)])
def test_subset_budget_rounds_half_up_with_at_least_one(n, fraction, budget):
    assert dec.subset_budget(n, fraction) == budget


def test_random_selection_centres_on_the_full_set():
    rng = np.random.default_rng(9)
    human = rng.choice([40.0, 80.0, 100.0], size=(400, 5))
    blocks = [dec.LanguagePairBlock("en-cs", human, np.zeros(400), tuple("abcde"))]

    selection = dec.random_selection(blocks, np.random.default_rng(1), 0.25, runs=200)
    full = dec.full_set_scores(blocks)

    # A random subset's expected AvgScore and %Perfect are the full set's.
    assert selection.runs == 200
    assert selection.avg_score == pytest.approx(full.avg_score, abs=0.5)
    assert selection.pct_perfect == pytest.approx(full.pct_perfect, abs=1.0)
    low, high = selection.avg_score_interval
    assert low < full.avg_score < high


def test_oracles():
    human_cs = np.array([[90.0, 70.0], [50.0, np.nan], [100.0, 100.0]])
    human_de = np.array([[60.0], [80.0]])

    per_pair = dec.oracle_source_language(human_cs)
    per_source = dec.oracle_source(
        [human_cs, human_de], [np.array(["x", "y", "z"]), np.array(["x", "z"])]
    )

    assert per_pair.tolist() == [80.0, 50.0, 100.0]
    assert per_source[0].tolist() == [pytest.approx(220 / 3), 50.0, pytest.approx(280 / 3)]
    assert per_source[1].tolist() == [pytest.approx(220 / 3), pytest.approx(280 / 3)]
