"""The individual-judgment table kept beside a language pair's matrix (pure): per-annotator
z-scores as scipy computes them, grouping by system, and a lossless, pickle-free round trip."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from difficulty.releases.judgments import (
    JUDGMENT_DTYPE,
    JudgmentRows,
    by_system,
    standardise,
    table_from_bytes,
    table_to_bytes,
)


def test_standardise_matches_scipy_per_annotator():
    rng = np.random.default_rng(7)
    values = rng.normal(60, 20, size=40)
    annotators = np.array(["a", "b", "c", "d"] * 10)

    z = standardise(values, annotators)

    for name in "abcd":
        mine = annotators == name
        np.testing.assert_allclose(z[mine], stats.zscore(values[mine], ddof=1))


def test_standardise_gives_zero_where_an_annotator_shows_no_scale_and_keeps_nan():
    z = standardise(
        np.array([100.0, 100.0, 5.0, math.nan, 1.0, 3.0]),
        np.array(["flat", "flat", "single", "x", "x", "x"]),
    )

    np.testing.assert_array_equal(z[:3], [0.0, 0.0, 0.0])
    assert math.isnan(z[3])
    np.testing.assert_allclose(z[4:], stats.zscore([1.0, 3.0], ddof=1))


def test_by_system_groups_judgments_in_column_order_and_leaves_repeats_out_by_default():
    rows = JudgmentRows()
    rows.add(0, "B", "w1", math.nan, 0.5, repeat=False)
    rows.add(0, "A", "w1", math.nan, -1.0, repeat=False)
    rows.add(1, "A", "w2", math.nan, 2.0, repeat=True)
    rows.add(1, "B", "w2", math.nan, 1.5, repeat=False)
    table, annotators = rows.table({"A": 0, "B": 1, "C": 2})

    assert annotators == ["w1", "w2"]
    back = table_from_bytes(table_to_bytes(table))
    assert (back.dtype, back.tobytes()) == (JUDGMENT_DTYPE, table.tobytes())
    plain = by_system(table, ["A", "B", "C"])
    assert {k: v.tolist() for k, v in plain.items()} == {"A": [-1.0], "B": [0.5, 1.5], "C": []}
    repeats = by_system(table, ["A", "B", "C"], include_repeats=True)
    assert repeats["A"].tolist() == [-1.0, 2.0]
    assert {k: v.size for k, v in by_system(table, ["A", "B", "C"], kind="raw").items()} == {
        "A": 0, "B": 0, "C": 0,
    }  # fmt: skip
    with pytest.raises(ValueError, match="kind must be 'z' or 'raw'"):
        by_system(table, ["A"], kind="mean")


def test_an_empty_table_and_a_foreign_dtype():
    assert table_from_bytes(b"").dtype == JUDGMENT_DTYPE
    with pytest.raises(ValueError, match="a judgment table has dtype"):
        table_to_bytes(np.zeros(3))
