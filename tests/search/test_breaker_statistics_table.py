"""Table 2 as the pages show it: a source-only difficulty estimate sits in a section of its own,
and one off the 0–100 scale (a heuristic such as word rarity) says so, instead of a row of
0.01s among QE rows of 28–96."""

from __future__ import annotations

from search.breaker.selectors import statistics_table
from search.models import BreakerStatistics


def _done(qe: float, difficulty: dict) -> BreakerStatistics:
    values = {"qe": {"sim-qe": qe}, "difficulty": difficulty, "naturalness": 50.0}
    return BreakerStatistics(status=BreakerStatistics.Status.DONE, values=values)


def _rows(columns):
    return [(row.label, row.section, row.cells) for row in statistics_table(columns)]


def test_a_heuristic_estimate_is_labelled_as_off_the_0_100_scale_in_its_own_section():
    rarity = {"engine": "rarity", "mean": 0.011012, "on_0_100_scale": False}
    rows = _rows([_done(28.75, rarity), _done(92.4, rarity | {"mean": 0.0088}), None])
    qe = rows.index(("QE (sim-qe)", False, ["28.75", "92.40", "–"]))
    assert rows[qe + 1:] == [
        ("Source-only difficulty estimate (rarity; its own scale, not 0–100 like the rows "
         "above: only the order of the columns means something, higher = easier)", True, []),
        ("rarity", False, ["0.01101", "0.0088", "–"]),
    ]  # fmt: skip


def test_an_estimate_on_0_100_gets_its_own_section_too():
    judge = {"engine": "llm-judge", "mean": 61.234, "on_0_100_scale": True}
    rows = _rows([_done(40.0, judge)])
    assert rows[-2:] == [
        ("Source-only difficulty estimate (llm-judge; 0–100, higher = easier)", True, []),
        ("llm-judge", False, ["61.23"]),
    ]
