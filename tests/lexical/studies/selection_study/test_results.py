"""The pure maths of the selection study: majority with tie rules, sufficient context, Table 2,
per-concept rows and the human accuracy (lexical/selection_study/results.py)."""

from __future__ import annotations

import pytest

from annotation.agreement import ATTESTED_WINS, NO_MAJORITY
from lexical.studies.selection_study import results
from lexical.studies.selection_study.results import ItemVotes


def votes(
    labels, attested="a", *, complete=True, concept="date", concept_id=1, example_id=None, item=0
) -> ItemVotes:
    return ItemVotes(
        item_id=item,
        example_id=example_id if example_id is not None else item,
        concept_id=concept_id,
        concept=concept,
        attested=attested,
        labels=tuple(labels),
        complete=complete,
    )


@pytest.mark.parametrize(
    ("labels", "rule", "majority", "tie", "tie_broken", "sufficient"),
    [
        (["a", "a", "b"], NO_MAJORITY, "a", False, False, True),
        (["a", "a", "a"], NO_MAJORITY, "a", False, False, True),
        (["b", "b", "a"], NO_MAJORITY, "b", False, False, False),
        (["b", "b", "a"], ATTESTED_WINS, "b", False, False, False),
        # 1-1-1 with three options: a tie; attested_wins breaks it for the attested variation.
        (["a", "b", "c"], NO_MAJORITY, None, True, False, False),
        (["a", "b", "c"], ATTESTED_WINS, "a", False, True, True),
        # A tie the attested variation is not part of stays a tie under either rule.
        (["b", "c"], ATTESTED_WINS, None, True, False, False),
        # Two passing annotators (one excluded by QC) who disagree.
        (["a", "b"], NO_MAJORITY, None, True, False, False),
        (["a", "b"], ATTESTED_WINS, "a", False, True, True),
    ],
)
def test_majority_and_sufficient_context_under_each_tie_rule(
    labels, rule, majority, tie, tie_broken, sufficient
):
    outcome = results.decide(votes(labels), rule)
    assert outcome.majority == majority
    assert outcome.tie is tie
    assert outcome.tie_broken is tie_broken
    assert outcome.sufficient is sufficient


def test_counts_and_agreement_per_item():
    outcome = results.decide(votes(["a", "b", "a"]), NO_MAJORITY)
    assert outcome.counts == {"a": 2, "b": 1}
    assert outcome.majority_votes == 2
    # One agreeing pair out of three.
    assert outcome.agreement == pytest.approx(1 / 3, abs=1e-6)
    assert results.decide(votes(["a"]), NO_MAJORITY).agreement is None


def test_an_incomplete_item_is_undecided_whatever_its_votes():
    outcome = results.decide(votes(["a", "a"], complete=False), NO_MAJORITY)
    assert outcome.majority == "a"
    assert outcome.sufficient is None


def test_no_votes_and_no_attested_variation_are_never_sufficient():
    assert results.decide(votes([]), NO_MAJORITY).sufficient is False
    assert results.decide(votes(["a", "a"], attested=None), ATTESTED_WINS).sufficient is False


def test_an_unknown_tie_rule_is_refused():
    with pytest.raises(ValueError, match="tie rule"):
        results.decide(votes(["a"]), "coin_flip")


def test_table2_counts_percent_over_complete_items_only():
    outcomes = results.decide_all(
        [
            votes(["a", "a", "b"], item=1),  # sufficient
            votes(["b", "b", "a"], item=2),  # another majority
            votes(["a", "b", "c"], item=3),  # tie
            votes(["a", "a", "a"], item=4),  # sufficient
            votes(["a"], complete=False, item=5),  # not complete: left out of the share
        ],
        NO_MAJORITY,
    )
    row = results.table2_row("fa", 120, outcomes)
    assert (row.language, row.pool_size, row.items, row.complete) == ("fa", 120, 5, 4)
    assert (row.sufficient, row.ties, row.dataset_size) == (2, 1, 2)
    assert row.sufficient_share == 0.5
    assert row.sufficient_percent == 50.0
    assert row.to_dict()["dataset_size"] == 2


def test_table2_before_any_complete_item_has_no_percentage():
    row = results.table2_row("ja", 9, results.decide_all([votes([], complete=False)], NO_MAJORITY))
    assert row.sufficient_share is None and row.sufficient_percent is None
    assert row.dataset_size == 0
    assert results.table2_row("ja", 0, []).items == 0


def test_table2_percent_has_one_decimal_like_the_paper():
    outcomes = results.decide_all(
        [votes(["a", "a"], item=1), votes(["a", "a"], item=2), votes(["b", "b"], item=3)],
        NO_MAJORITY,
    )
    assert results.table2_row("hy", 3, outcomes).sufficient_percent == 66.7


def test_per_concept_rows_sorted_by_concept_with_mean_agreement():
    outcomes = results.decide_all(
        [
            votes(["a", "a", "a"], concept="date", concept_id=1, item=1),
            votes(["a", "a", "b"], concept="date", concept_id=1, item=2),
            votes(["x", "x", "x"], attested="x", concept="art", concept_id=2, item=3),
            votes(["x"], attested="x", concept="art", concept_id=2, item=4, complete=False),
        ],
        NO_MAJORITY,
    )
    art, date = results.per_concept(outcomes)
    assert (art.concept, art.items, art.complete, art.sufficient) == ("art", 2, 1, 1)
    assert art.mean_agreement == 1.0
    assert (date.concept, date.items, date.complete, date.sufficient) == ("date", 2, 2, 2)
    assert date.mean_agreement == pytest.approx((1 + 1 / 3) / 2, abs=1e-6)
    assert date.sufficient_percent == 100.0


def test_human_accuracy_over_the_evaluations_examples_only():
    outcomes = results.decide_all(
        [
            votes(["a", "a", "b"], example_id=10, item=1),  # right
            votes(["b", "b", "b"], example_id=11, item=2),  # wrong
            votes(["a", "a", "a"], example_id=12, item=3),  # right but not in the evaluation
            votes(["a"], example_id=13, item=4, complete=False),  # not complete yet
        ],
        NO_MAJORITY,
    )
    human = results.human_accuracy(outcomes, [10, 11, 13, 14], annotators_per_item=3)
    assert (human.examples, human.correct, human.missing) == (2, 1, 2)
    assert human.accuracy == 0.5 and human.percent == 50.0
    assert results.human_accuracy([], [1], 3).accuracy is None


def test_source_parts_split_at_the_highlight():
    item = ItemVotes(1, 1, 1, "date", "a", (), True, source="I ate a date.", highlight=(8, 12))
    assert item.source_parts == ("I ate a ", "date", ".")
    assert votes([]).source_parts is None
