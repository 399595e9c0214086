"""Seed 001 Table 4's model gaps per method (ranking.subsets.gaps), on a hand-made table."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ranking.subsets.gaps import model_gaps

NAN = float("nan")


def test_means_per_method_in_one_order_and_the_gaps_between_neighbours():
    # Rows: translators t0, t1, t2; columns: 2 seed texts, 3 breaker texts.
    scores = np.array(
        [
            [90.0, 88.0, 60.0, 50.0, 55.0],  # t0
            [91.0, 89.0, 70.0, 68.0, 72.0],  # t1: best overall
            [89.0, NAN, 40.0, 45.0, 35.0],  # t2: worst, missing one seed text
        ]
    )

    table = model_gaps(scores, [("Seeds", [0, 1]), ("MT-breaker", [2, 3, 4])])

    assert table["order"] == [1, 0, 2]
    assert table["pooled_means"] == pytest.approx([78.0, 68.6, 52.25])
    seeds, breaker = table["rows"]
    assert seeds["means"] == pytest.approx([90.0, 89.0, 89.0]) and seeds["n"] == [2, 2, 1]
    assert seeds["gaps"] == pytest.approx([1.0, 0.0]) and seeds["spread"] == pytest.approx(1.0)
    assert breaker["means"] == pytest.approx([70.0, 55.0, 40.0])
    assert breaker["gaps"] == pytest.approx([15.0, 15.0])
    assert breaker["mean_abs_gap"] == pytest.approx(15.0) and breaker["size"] == 3
    json.dumps(table, allow_nan=False)


def test_a_reversed_pair_is_a_negative_gap_and_an_unscored_translator_is_none():
    scores = np.array([[80.0, 80.0, 10.0], [70.0, 70.0, 90.0], [NAN, NAN, 50.0]])

    table = model_gaps(scores, [("A", [0, 1]), ("B", [2])])

    assert table["order"] == [1, 0, 2]  # means 76.7, 56.7, 50
    first = table["rows"][0]
    assert first["means"][:2] == pytest.approx([70.0, 80.0]) and first["means"][2] is None
    assert first["gaps"][0] == pytest.approx(-10.0) and first["gaps"][1] is None
    assert first["mean_abs_gap"] == pytest.approx(10.0)
    with pytest.raises(ValueError, match="group 'C'"):
        model_gaps(scores, [("C", [3])])
