"""``manage.py replay_allocation``: replay policies on a dataset in the database."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.ranking.support import tiered_dataset

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("replay_allocation", *args, stdout=out)
    return out.getvalue()


def test_the_json_report_and_the_table_name_every_policy():
    tiered_dataset()
    common = ["--dataset", "tiers", "--seeds", "1", "--checkpoints", "4", "--resamples", "50"]
    report = json.loads(run(*common, "--format", "json"))
    assert report["full_top_cluster"] == ["alpha", "beta"]
    assert 0.0 <= report["top_cluster_stability"] <= 1.0
    assert (report["segments"], report["judgments"]) == (60, 360)
    assert set(report["policies"]) == {"uniform", "uniform_segments", "pearmut", "settle"}
    settle = report["policies"]["settle"]
    assert settle["seeds"] == 1 and settle["curve"]["budgets"][-1] == 360
    assert settle["top_reached"] == 1  # with every score revealed the top cluster is the full one
    text = run(*common, "--policy", "settle", "--policy", "uniform", "--goal", "adjacent")
    lines = text.splitlines()
    assert lines[0].startswith("tiers en-de: 6 systems x 60 segments, 360 recorded scores")
    assert [line.split()[0] for line in lines[2:]] == ["settle(goal=adjacent)", "uniform"]


def test_refusals_name_the_problem():
    tiered_dataset()
    with pytest.raises(CommandError, match="no difficulty dataset named 'nope'"):
        run("--dataset", "nope")
    with pytest.raises(CommandError, match=r"cannot replay: .*no score 'bleu'"):
        run("--dataset", "tiers", "--score", "bleu")
    with pytest.raises(CommandError, match="--seeds must be between 1 and 1000"):
        run("--dataset", "tiers", "--seeds", "0")
