"""The evaluation chart's hardest-subset bars start at 0 (or below it, for negative scores), with
their values written on them: an axis from 78 made AvgScores of 78.2 and 79.5 look 1 : 5."""

from __future__ import annotations

import re

import pytest

from difficulty import charts


def _results(avg: dict[str, float | None], random: float, full: float) -> dict:
    return {
        "estimators": {name: {"dec": 0.1 * n, "avg_score": value}
                       for n, (name, value) in enumerate(avg.items(), start=1)},
        "details": {name: {"group": "Heuristic", "dec_ci": None} for name in avg},
        "random_selection": {"avg_score": random},
        "dataset": {"full_set": {"avg_score": full}},
        "settings": {"subset_fraction": 0.25},
    }  # fmt: skip


def _subset_texts(results: dict) -> list[str]:
    svg = charts.evaluation_chart_svg(results).decode()
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg[svg.index('<g id="axes_2">') :])


def test_the_subset_axis_starts_at_zero_and_the_bars_carry_their_values():
    texts = _subset_texts(_results({"length": 79.5, "oracle-src": 78.2}, 86.0, 88.0))
    ticks = texts[: texts.index("AvgScore of the hardest 25% (lower = harder)")]
    assert ticks[0] == "0" and ticks[-1] == "80"
    assert {"78.2", "79.5"} <= set(texts) and "nan" not in texts


@pytest.mark.parametrize(
    ("avg", "reference", "first_tick"),
    [({"length": -4.0, "rarity": -2.5}, -1.0, "−4"), ({"length": 61.0, "rarity": None}, 70.0, "0")],
)
def test_negative_scores_reach_below_zero_and_a_missing_value_is_no_label(
    avg, reference, first_tick
):
    texts = _subset_texts(_results(avg, reference, 0.0))
    assert texts[0] == first_tick and "nan" not in texts
