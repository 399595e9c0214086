"""Pure parts: the acceptance rule and near-duplicate detection (no database)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from challenge_sets import similarity
from challenge_sets.policy import PolicyError, ValidationPolicy, propose


def test_policy_defaults_round_trip_and_bad_values_are_named():
    policy = ValidationPolicy.from_dict({"protocol": "esa", "threshold": "40"})
    assert policy.threshold == 40.0
    assert ValidationPolicy.from_dict(policy.to_dict()) == policy
    with pytest.raises(PolicyError) as caught:
        ValidationPolicy.from_dict({"overlap": 0, "min_agreement": 2, "colour": "red"})
    assert caught.value.errors == {"colour": "unknown setting"}
    with pytest.raises(PolicyError) as caught:
        ValidationPolicy.from_dict({"overlap": 0, "min_agreement": 2})
    assert set(caught.value.errors) == {"overlap", "min_agreement"}
    with pytest.raises(PolicyError, match="majority_is_attested"):
        ValidationPolicy.from_dict({"protocol": "choice", "rule": "difficulty_at_least"})


def test_the_description_counts_annotators_in_words():
    assert ValidationPolicy(overlap=1).describe().startswith("esa, 1 annotator, human difficulty")
    assert ValidationPolicy(overlap=3).describe().startswith("esa, 3 annotators, ")


def test_difficulty_rule_and_minimum_agreement():
    policy = ValidationPolicy(threshold=50, min_agreement=0.7)
    args = {"majority": None, "attested": "", "n_judgments": 2}
    assert propose(policy, human_difficulty=60, agreement=0.9, **args).verdict == "accept"
    assert propose(policy, human_difficulty=40, agreement=0.9, **args).verdict == "reject"
    low = propose(policy, human_difficulty=60, agreement=0.5, **args)
    assert (low.verdict, low.reason) == ("review", "agreement 0.50 < 0.7")
    assert propose(policy, human_difficulty=60, agreement=0.9, majority=None, attested="",
                   n_judgments=0) is None  # fmt: skip


def test_majority_rule_compares_with_the_attested_label():
    policy = ValidationPolicy(protocol="choice", rule="majority_is_attested")
    common = {"human_difficulty": None, "agreement": 1.0, "attested": "banka", "n_judgments": 3}
    assert propose(policy, majority="banka", **common).verdict == "accept"
    assert propose(policy, majority="břeh", **common).verdict == "reject"
    assert propose(policy, majority="tie", **common).verdict == "review"


def test_near_duplicates_are_found_against_the_set_and_earlier_new_texts():
    existing = ["The bank by the river was closed for the spring floods."]
    new = [
        "The bank by the river was closed for the spring flood.",  # near-copy of existing
        "A completely different sentence about contract law.",
        "A completely different sentence about contract law!",  # near-copy of new[1]
    ]
    found = similarity.nearest_earlier(existing, new)
    assert found[0] is not None and found[0].index == 0 and found[0].similarity > 0.9
    assert found[1] is None
    assert found[2] is not None and found[2].index == 2


def test_thousands_of_items_take_well_under_a_few_seconds():
    rng = np.random.default_rng(0)
    words = [f"w{n}" for n in range(3000)]
    texts = [" ".join(rng.choice(words, size=15)) for _ in range(3000)]
    start = time.perf_counter()
    found = similarity.nearest_earlier(texts[:1000], texts[1000:])
    assert time.perf_counter() - start < 10
    assert len(found) == 2000 and all(m is None for m in found)
