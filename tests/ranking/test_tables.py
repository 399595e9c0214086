"""The findings tables (no database): rules between clusters, rank ranges, and system names that
would break LaTeX, Typst, a spreadsheet or a terminal printed as plain text."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from scipy import stats as scipy_stats

from ranking import tables
from ranking.results import build_result, mean_intervals, ranked_rows
from ranking.stats import Ranking

HOSTILE = [
    "A&B_#1 $x$ 50% {a}",
    '=HYPERLINK("http://x")',
    'say "hi" \\ #strong[no]',
    "nul\x00line\nbreak",
]


def result(systems=HOSTILE, clusters=(1, 1, 2, 3), means=(71.25, 70.5, 60.0, 50.125)) -> dict:
    n = len(systems)
    scores = np.array([[m - 1, m + 1, m] for m in means])
    ranking = Ranking(
        systems=list(systems),
        means=np.array(means),
        n_segments=np.full(n, 3),
        p_values=np.full((n, n), 0.01),
        rank_ranges=np.array([[1, 2], [1, 2], [3, 3], [4, 4]]),
        clusters=np.array(clusters),
        wins=np.array([2, 2, 1, 0]),
        input_order=np.arange(n),
    )
    settings = {"test": "wilcoxon", "pairs": "all", "alpha": 0.05, "holm": False}
    return build_result(ranking, scores, settings=settings, description="WMT22 zh_en")


def test_rows_carry_rank_ranges_and_a_rule_after_each_cluster():
    rows = ranked_rows(result())
    assert [r.rank_range for r in rows] == ["1–2", "1–2", "3", "4"]
    assert [r.ends_cluster for r in rows] == [False, True, True, False]


def test_latex_escapes_every_special_character_and_draws_midrules_between_clusters():
    text = tables.as_latex(result())
    body = text.split("\\midrule\n", 1)[1]
    assert body.splitlines()[:5] == [
        r"1--2 & A\&B\_\#1 \$x\$ 50\% \{a\} & 71.2 & 3 \\",
        r'1--2 & =HYPERLINK("http://x") & 70.5 & 3 \\',
        "\\midrule",
        r'3 & say "hi" \textbackslash{} \#strong[no] & 60.0 & 3 \\',
        "\\midrule",
    ]
    assert "nul line break" in text and "\x00" not in text
    assert text.count("\\midrule") == 3 and "% WMT22 zh\\_en" in text


def test_typst_puts_names_in_string_literals_that_markup_never_reads():
    text = tables.as_typst(result())
    assert '[#"say \\"hi\\" \\\\ #strong[no]"]' in text
    assert '[#"A&B_#1 $x$ 50% {a}"]' in text
    assert text.count("table.hline(stroke: 0.5pt),") == 3  # under the header, two cluster rules
    assert "\x00" not in text and "nul line break" in text


def test_csv_guards_formulas_and_keeps_full_precision():
    lines = list(csv.reader(io.StringIO("".join(tables.as_csv(result())))))
    assert lines[0][:6] == [
        "position",
        "rank_range",
        "best_rank",
        "worst_rank",
        "cluster",
        "system",
    ]
    assert lines[2][5] == '\'=HYPERLINK("http://x")'
    assert lines[1][6] == "71.25" and lines[4][6] == "50.125"
    assert len(lines) == 5  # the NUL and the line break stayed inside their quoted cell


def test_text_and_json():
    text = tables.as_text(result(systems=["a", "b", "c", "d"]))
    assert text.splitlines()[2].split() == ["Rank", "System", "Mean", "95%", "CI", "n", "Wins"]
    assert text.count("\n---") == 3
    data = json.loads(tables.as_json(result()))
    assert data["ranking"]["systems"] == HOSTILE and data["settings"]["test"] == "wilcoxon"


def test_unknown_formats_are_refused():
    with pytest.raises(ValueError, match="format must be one of csv, latex, typst, json, text"):
        tables.render(result(), "xlsx")


def test_mean_intervals_are_students_t():
    scores = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, np.nan, np.nan, np.nan]])
    low, high = mean_intervals(scores)[0]
    expected = scipy_stats.t.interval(0.95, 3, loc=2.5, scale=scipy_stats.sem([1, 2, 3, 4]))
    assert (low, high) == pytest.approx(expected)
    assert np.isnan(mean_intervals(scores)[1]).all()


def test_negative_means_print_a_minus_sign():
    negative = result(systems=["a", "b", "c", "d"], means=(-0.125, -0.5, -1.25, -2.0))
    assert r"1--2 & a & $-$0.125 & 3 \\" in tables.as_latex(negative)
    assert '[#"\u22120.125"]' in tables.as_typst(negative)
    assert next(csv.reader(io.StringIO(list(tables.as_csv(negative))[1])))[6] == "-0.125"
