"""A discrimination result as tables (ranking.subsets.exports): the headline at 25 %, which side
of the band is better, and a spreadsheet-safe CSV whatever the names."""

from __future__ import annotations

import csv
import io

from ranking import discrimination as rd
from ranking.subsets import exports


def _point(fraction: float, size: int, clusters: float, p: float) -> dict:
    subset = dict.fromkeys(rd.FIELDS, 0.5) | {"n_clusters_stepwise": clusters,
                                              "mean_adjacent_p_full_order": p}  # fmt: skip
    band = dict.fromkeys(rd.FIELDS, 0.5) | {"n_clusters_stepwise": 3.0}
    return {"fraction": fraction, "size": size, "subset": subset, "random_mean": band,
            "random_sd": dict.fromkeys(rd.FIELDS, 0.1)}  # fmt: skip


def _result() -> dict:
    points = [_point(0.1, 10, 2.0, 0.7), _point(0.3, 30, 5.0, 0.2), _point(0.2, 20, 4.0, 0.3)]
    return {
        "subject": {"description": "d", "full_description": "=HYPERLINK(x)", "n_segments": 100,
                    "notes": ["n"], "systems": ["a", "b"]},
        "settings": {"test": "wilcoxon", "n_random": 3, "alpha": 0.05, "seed": 0},
        "full": dict.fromkeys(rd.FIELDS, 1.0),
        "subsets": [{"label": "@SUM(1)", "curve": True, "n_columns": 100, "points": points}],
        "gaps": {"systems": ["+sys", "b"], "rows": [{"label": "-m", "size": 4, "means": [70, 60],
                                                      "gaps": [10.0]}]},
    }  # fmt: skip


def test_the_headline_is_the_point_closest_to_a_quarter():
    headline = exports.headline(_result()["subsets"][0])

    assert headline is not None and (headline["fraction"], headline["size"]) == (0.2, 20)
    assert headline["n_clusters_stepwise"] == {"value": 4.0, "mean": 3.0, "sd": 0.1}


def test_point_rows_say_which_side_separates_better():
    rows = {r["field"]: r for r in exports.point_rows(_point(0.25, 25, 4.0, 0.7))}

    assert rows["n_clusters_stepwise"]["better"] is True  # more clusters
    assert rows["mean_adjacent_p_full_order"]["better"] is False  # a higher p-value
    assert rows["kendall_tau"]["better"] is None  # equal to the band's mean
    assert rows["mean_difficulty"]["better"] is None  # harder is not "better separated"
    assert rows["n_clusters"]["digits"] == 0 and rows["spa"]["digits"] == 3


def test_the_csv_guards_every_name_a_spreadsheet_would_run():
    rows = list(csv.reader(io.StringIO(exports.csv_download(_result()))))

    cells = {cell for row in rows for cell in row}
    assert {"'=HYPERLINK(x)", "'@SUM(1)", "'-m", "mean +sys", "gap +sys - b"} <= cells
    assert not any(cell.startswith(("=", "@", "+", "-")) for cell in cells if cell)
    assert len([r for r in rows if r[0] == "subset"]) == 3 * len(rd.FIELDS)
