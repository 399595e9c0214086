"""The pure maths of the rule-validation study (Tables 1, 3, 4–6), by hand."""

from __future__ import annotations

import pytest

from lexical.studies.rule_validation import results
from lexical.studies.rule_validation.results import ConceptJudgments, RuleJudgments, Share


def concept(item_id, n_variations, missing, wrong, rules=(), raw=None):
    return ConceptJudgments(
        item_id=item_id,
        n_variations=n_variations,
        missing=tuple(missing),
        wrong=tuple(frozenset(w) for w in wrong),
        rules=tuple(RuleJudgments(r, g, tuple(v)) for r, g, v in rules),
        raw=raw or {},
    )


def test_share_micro_and_majority_differ_and_ties_are_left_out():
    # Units: (T,T,F) majority T; (T,F,F) majority F; (T,F) tie; micro 4 of 8.
    result = results.share([[True, True, False], [True, False, False], [True, False]])
    assert result == Share(
        micro=0.5, micro_positive=4, micro_total=8,
        majority=0.5, majority_positive=1, majority_total=2, ties=1,
    )  # fmt: skip


def test_share_majority_waits_for_min_votes_but_micro_counts_everything():
    result = results.share([[True, True, True], [False, False]], min_votes=3)
    assert (result.micro, result.micro_positive, result.micro_total) == (0.6, 3, 5)
    assert (result.majority, result.majority_total, result.ties) == (1.0, 1, 0)


def test_share_of_nothing_is_none_not_zero():
    result = results.share([])
    assert (result.micro, result.majority, result.micro_total) == (None, None, 0)


def test_precision_counts_listed_variations_not_marked_wrong():
    # Concept A, 3 variations; annotators marked {2}, {2}, {} -> variation 2 is wrong by
    # majority; micro: 9 judgements, 2 marks -> 7/9. Concept B, 2 variations, all "none".
    judged = [
        concept(1, 3, [False] * 3, [{2}, {2}, set()]),
        concept(2, 2, [False] * 3, [set(), set(), set()]),
    ]
    result = results.precision(judged, min_votes=3)
    assert (result.micro_positive, result.micro_total) == (13, 15)
    assert result.micro == pytest.approx(13 / 15, abs=1e-6)
    assert (result.majority_positive, result.majority_total, result.majority) == (4, 5, 0.8)


def test_recall_is_the_share_of_concepts_with_nothing_missing():
    # A: one of three says missing -> majority complete; B: two of three say missing.
    judged = [
        concept(1, 2, [True, False, False], [set()] * 3),
        concept(2, 2, [True, True, False], [set()] * 3),
    ]
    result = results.recall(judged, min_votes=3)
    assert (result.micro_positive, result.micro_total) == (3, 6)
    assert (result.majority_positive, result.majority_total, result.majority) == (1, 2, 0.5)


def test_rule_shares_per_generator_in_name_order():
    judged = [
        concept(1, 2, [False] * 3, [set()] * 3, rules=[
            (10, "gpt", [True, True, True]), (11, "gemma", [True, False, False]),
        ]),
        concept(2, 2, [False] * 3, [set()] * 3, rules=[
            (12, "gpt", [True, False, False]), (13, "gemma", [False, False, True]),
        ]),
    ]  # fmt: skip
    shares = results.rule_shares(judged, min_votes=3)
    assert list(shares) == ["gemma", "gpt"]
    assert (shares["gpt"].micro_positive, shares["gpt"].micro_total) == (4, 6)
    assert (shares["gpt"].majority, shares["gemma"].majority) == (0.5, 0.0)
    assert shares["gemma"].micro == pytest.approx(2 / 6, abs=1e-6)


def test_rule_verdict_majority_tie_and_incomplete():
    assert results.rule_verdict([True, True, False], min_votes=3) == "correct"
    assert results.rule_verdict([False, False, True], min_votes=3) == "incorrect"
    assert results.rule_verdict([True, False], min_votes=2) is None  # tie
    assert results.rule_verdict([True, True], min_votes=3) is None  # incomplete
    assert results.rule_verdict([], min_votes=0) is None
    judged = [concept(1, 2, [], [], rules=[(5, "g", [True, True, True]), (6, "g", [True])])]
    assert results.rule_verdicts(judged, min_votes=3) == {5: "correct", 6: None}


def test_family_agreements_per_family_by_hand():
    # rules: rule-1 (yes,yes,yes), rule-2 (yes,no,no): total agreement 1/2, PABAK 0.
    # precision: 2 options; answers none, [0], none -> option 0 (F,T,F), option 1 unanimous.
    # recall: unanimous "no" -> κ undefined (one category), PABAK 1.
    raw = {
        "recall": ["no", "no", "no"],
        "precision": ["none", [0], "none"],
        "rule-1": ["yes", "yes", "yes"],
        "rule-2": ["yes", "no", "no"],
    }
    judged = [concept(7, 2, [False] * 3, [set(), {0}, set()], raw=raw)]
    rows = results.family_agreements(judged, {7: ["rule-1", "rule-2"]})
    assert list(rows) == ["rules", "precision", "recall"]
    assert (rows["rules"].n_units, rows["rules"].total_agreement, rows["rules"].pabak) == (
        2, 0.5, 0.0,
    )  # fmt: skip
    assert (rows["precision"].n_units, rows["precision"].total_agreement) == (2, 0.5)
    assert (rows["recall"].total_agreement, rows["recall"].fleiss_kappa) == (1.0, None)
    assert rows["recall"].pabak == 1.0
