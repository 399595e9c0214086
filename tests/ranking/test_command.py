"""``manage.py rank_systems``: the foreground twin of the ranking job prints the table."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from ranking.models import SystemRanking
from tests.ranking.support import tiered_dataset

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("rank_systems", *args, stdout=out)
    return out.getvalue()


def test_the_text_table_has_three_clusters_and_the_ranking_is_kept():
    tiered_dataset()
    text = run("--dataset", "tiers", "--test", "wilcoxon")
    lines = text.splitlines()
    assert lines[0] == (
        "tiers en-de: systems ranked by mean score; clusters by one-sided wilcoxon tests "
        "(all pairs) at p < 0.05"
    )
    assert lines[2].split() == ["Rank", "System", "Mean", "95%", "CI", "n", "Wins"]
    rules = [k for k, line in enumerate(lines) if set(line) == {"-"}]
    assert rules == [3, 6, 9]  # under the header, then after each of the first two clusters
    assert [line.split()[0] for line in lines[4:6]] == ["1–2", "1–2"]
    ranking = SystemRanking.objects.get()
    assert (ranking.status, ranking.test) == ("done", "wilcoxon")


def test_formats_and_an_output_file(tmp_path):
    tiered_dataset()
    data = json.loads(run("--dataset", "tiers", "--format", "json", "--test", "ranksum"))
    assert data["ranking"]["clusters"] == [1, 1, 2, 2, 3, 3]
    assert data["settings"]["test"] == "ranksum"
    target = tmp_path / "table.typ"
    said = run("--dataset", "tiers", "--format", "typst", "--output", str(target))
    assert said.startswith(f"wrote {target} (ranking ")
    assert target.read_text().count("table.hline(stroke: 0.5pt),") == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dataset", "nope"], "there is no difficulty dataset named 'nope'"),
        (["--dataset", "tiers", "--lp", "xx-yy"],
         "cannot rank: --lp: tiers has no language pair 'xx-yy' (en-de)"),
        (["--dataset", "tiers", "--resamples", "0"],
         "cannot rank: --resamples: must be between 1 and 10000"),
        (["--challenge-set", "Hard"], "--challenge-set needs --set-version N"),
    ],
)  # fmt: skip
def test_errors_are_one_line_and_nothing_is_kept(args, message):
    tiered_dataset()
    with pytest.raises(CommandError) as error:
        run(*args)
    assert str(error.value) == message
    assert not SystemRanking.objects.exists()
