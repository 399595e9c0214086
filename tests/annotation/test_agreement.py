"""Agreement statistics against hand-computed examples and seed 004's published numbers."""

import numpy as np
import pytest

from annotation.agreement import (
    TIE,
    choice_agreement,
    expand_multi_select,
    fleiss_kappa,
    item_agreement,
    krippendorff_alpha_interval,
    majority,
    majority_multi,
    pairwise_correlations,
    reliability_matrix,
    score_agreement,
)


def rows(scores_by_annotator):
    return [
        (item, annotator, score)
        for annotator, scores in scores_by_annotator.items()
        for item, score in scores.items()
        if score is not None
    ]


# ----------------------------------------------------------------------------- scores


def test_pairwise_kendall_and_pearson_by_hand():
    # A = 1 2 3 4, B = 1 3 2 4: 5 concordant, 1 discordant pair → tau = 4/6.
    # Deviations from 2.5: A (−1.5 −.5 .5 1.5), B (−1.5 .5 −.5 1.5): cov 4, var 5 → r = 0.8.
    data = rows({"A": {1: 1, 2: 2, 3: 3, 4: 4}, "B": {1: 1, 2: 3, 3: 2, 4: 4}})
    result = score_agreement(data)
    (pair,) = result.pairs
    assert (pair.annotator_a, pair.annotator_b, pair.n_shared) == ("A", "B", 4)
    assert pair.kendall_tau == pytest.approx(4 / 6, abs=1e-6)
    assert pair.pearson == pytest.approx(0.8, abs=1e-6)
    assert result.mean_kendall_tau == pytest.approx(4 / 6, abs=1e-6)
    assert (result.n_items, result.n_annotators) == (4, 2)


def test_pairs_use_only_shared_items_and_need_min_shared():
    data = rows(
        {
            "A": {1: 10, 2: 20, 3: 30, 4: 40},
            "B": {1: 15, 2: 25, 3: 35, 5: 90},  # shares items 1-3 with A
            "C": {5: 50, 6: 60},  # shares item 5 with B only
        }
    )
    annotators, _, matrix = reliability_matrix(data)
    pairs = {(p.annotator_a, p.annotator_b): p for p in pairwise_correlations(annotators, matrix)}
    assert pairs[("A", "B")].n_shared == 3
    assert pairs[("A", "B")].kendall_tau == 1.0
    assert pairs[("A", "B")].pearson == 1.0
    assert pairs[("A", "C")].n_shared == 0 and pairs[("A", "C")].kendall_tau is None
    assert pairs[("B", "C")].n_shared == 1 and pairs[("B", "C")].pearson is None


def test_constant_annotator_has_no_correlation():
    data = rows({"A": {1: 50, 2: 50, 3: 50}, "B": {1: 10, 2: 20, 3: 30}})
    (pair,) = score_agreement(data).pairs
    assert pair.kendall_tau is None and pair.pearson is None


def test_krippendorff_alpha_interval_by_hand():
    # Coders A = (1, 2, 3), B = (1, 2, 4). Pairable values 1 1 2 2 3 4 (n = 6).
    # D_o = (1/n) Σ_u Σ_pairs δ²/(m_u − 1) = (2 · 1²)/6 = 1/3.
    # D_e = Σ_{ordered pairs} δ² / (n(n − 1)) = 2 · (nΣx² − (Σx)²) / 30 = 2 · (210 − 169) / 30.
    # α = 1 − D_o / D_e = 1 − 10/82 = 36/41.
    data = rows({"A": {1: 1, 2: 2, 3: 3}, "B": {1: 1, 2: 2, 3: 4}})
    assert score_agreement(data).krippendorff_alpha == pytest.approx(36 / 41, abs=1e-6)


def test_krippendorff_ignores_items_judged_once_and_missing_cells():
    # Item 9 has a single judgment: not pairable, must not change alpha.
    base = rows({"A": {1: 1, 2: 2, 3: 3}, "B": {1: 1, 2: 2, 3: 4}})
    extra = [*base, (9, "A", 100.0)]
    assert score_agreement(extra).krippendorff_alpha == pytest.approx(36 / 41, abs=1e-6)


def test_krippendorff_undefined_cases():
    assert krippendorff_alpha_interval(np.array([[1.0, np.nan], [np.nan, 2.0]])) is None
    assert krippendorff_alpha_interval(np.array([[5.0, 5.0], [5.0, 5.0]])) is None
    assert score_agreement([]).krippendorff_alpha is None


def test_perfect_agreement_alpha_is_one():
    data = rows({"A": {1: 10, 2: 60, 3: 90}, "B": {1: 10, 2: 60, 3: 90}, "C": {1: 10, 3: 90}})
    assert score_agreement(data).krippendorff_alpha == 1.0


# ----------------------------------------------------------------------------- choices


def test_fleiss_total_agreement_pabak_by_hand():
    # P_i = 1, 1/3, 1, 1/3 → P̄ = 2/3; p_a = p_b = 1/2 → P_e = 1/2; κ = (2/3 − 1/2)/(1/2) = 1/3.
    # Total agreement = 2/4; PABAK = 2 · 0.5 − 1 = 0.
    labels = {1: ["a", "a", "a"], 2: ["a", "a", "b"], 3: ["b", "b", "b"], 4: ["a", "b", "b"]}
    result = choice_agreement(labels)
    assert result.total_agreement == 0.5
    assert result.fleiss_kappa == pytest.approx(1 / 3, abs=1e-6)
    assert result.pabak == 0.0
    assert (result.n_items, result.n_categories) == (4, 2)


def test_fleiss_matches_the_textbook_example():
    # Fleiss (1971) worked example as given on Wikipedia: 10 subjects, 14 raters, 5 categories;
    # P̄ = 0.378, P_e = 0.213, κ = 0.210.
    table = np.array(
        [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ],
        dtype=float,
    )
    assert fleiss_kappa(table) == pytest.approx(0.210, abs=5e-4)


def test_reproduces_seed_004_table_4_afrikaans():
    # 40 yes/no rule judgments by 3 annotators: 39 unanimous "correct", one 2-1 split.
    # Seed 004 Table 4 (Afrikaans): total agreement 0.975, Fleiss' κ −0.008, PABAK 0.950.
    labels = {i: [1, 1, 1] for i in range(39)} | {39: [1, 1, 0]}
    result = choice_agreement(labels, categories=[0, 1])
    assert result.total_agreement == 0.975
    assert round(result.fleiss_kappa, 3) == -0.008
    assert result.pabak == pytest.approx(0.95, abs=1e-9)


def test_reproduces_seed_004_table_4_latvian_nan_kappa():
    labels = {i: [1, 1, 1] for i in range(20)}
    result = choice_agreement(labels, categories=[0, 1])
    assert result.total_agreement == 1.0
    assert result.fleiss_kappa is None  # the paper's "NaN": P_e = 1
    assert result.pabak == 1.0


def test_pabak_uses_the_number_of_offered_options():
    # 3 options offered, 1 of 2 items unanimous: PABAK = (3 · 0.5 − 1) / 2 = 0.25.
    labels = {1: ["x", "x", "x"], 2: ["x", "y", "y"]}
    assert choice_agreement(labels, categories=["x", "y", "z"]).pabak == 0.25
    assert choice_agreement(labels).pabak == 0.0  # q = 2 options used
    # Items with their own option lists (lexical variations): q given explicitly.
    result = choice_agreement(labels, n_categories=3)
    assert (result.pabak, result.n_categories) == (0.25, 3)


def test_items_with_one_answer_are_skipped():
    labels = {1: ["a", "a"], 2: ["b"], 3: []}
    result = choice_agreement(labels)
    assert result.n_items == 1 and result.total_agreement == 1.0


def test_multi_select_is_per_option_yes_no():
    answers = {1: [{"a", "b"}, {"a"}, {"a", "b"}], 2: [{"c"}, {"c"}, {"c"}]}
    expanded = expand_multi_select(answers, options=["a", "b", "c"])
    assert expanded[(1, "a")] == [True, True, True]
    assert expanded[(1, "b")] == [True, False, True]
    assert expanded[(2, "a")] == [False, False, False]
    result = choice_agreement(answers, categories=["a", "b", "c"], multi_select=True)
    # 6 (item, option) decisions, 5 unanimous → 5/6; PABAK = 2 · 5/6 − 1 = 2/3.
    assert result.n_items == 6
    assert result.total_agreement == pytest.approx(5 / 6, abs=1e-6)
    assert result.pabak == pytest.approx(2 / 3, abs=1e-6)
    assert result.multi_select is True


def test_item_agreement():
    assert item_agreement(["a", "a", "b"]) == pytest.approx(1 / 3, abs=1e-6)
    assert item_agreement(["a", "a"]) == 1.0
    assert item_agreement(["a"]) is None


# ----------------------------------------------------------------------------- majority


def test_majority_of_three():
    vote = majority(["x", "y", "x"])
    assert (vote.label, vote.votes, vote.n, vote.tie) == ("x", 2, 3, False)
    assert vote.display() == "x"


def test_tie_is_no_majority():
    vote = majority(["x", "y", "z"])
    assert vote.tie and vote.label is None and vote.display() == TIE
    assert majority(["x", "y"]).tie


def test_plurality_versus_strict_majority():
    labels = ["x", "x", "y", "z", "w"]
    assert majority(labels).label == "x"
    assert majority(labels, strict=True).tie


def test_no_answers():
    vote = majority([])
    assert (vote.label, vote.n, vote.tie, vote.display()) == (None, 0, False, "")


def test_majority_multi_select():
    vote = majority_multi([{"a", "b"}, {"a"}, {"a", "b"}])
    assert vote.label == frozenset({"a", "b"}) and vote.votes == 2
    assert vote.display() == "a|b"
    assert majority_multi([{"a"}, {"b"}]).tie  # each option chosen by exactly half
    assert majority_multi([{"a"}, {"b"}, {"c"}]).label == frozenset()
