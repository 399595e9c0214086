"""``run_breaker``: one run or a comparison, queued or in the foreground, with a JSON summary."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from search.breaker.services import ADVANCE_TASK
from search.models import BreakerRun
from tests.search.breaker_helpers import offline_config

pytestmark = pytest.mark.django_db
EXAMPLE = (
    Path(__file__).resolve().parents[2] / "search" / "examples" / "breaker_offline_compare.json"
)


def test_the_example_comparison_runs_in_the_foreground_on_a_fresh_database():
    out = StringIO()
    call_command("run_breaker", str(EXAMPLE), "--foreground", "--json", stdout=out)
    summaries = json.loads(out.getvalue())
    assert [s["method"] for s in summaries] == [
        "seeds", "zeroshot", "zeroshot_min", "breaker_seeded", "breaker_seedless",
    ]  # fmt: skip
    assert all(s["status"] == "finished" and s["failed_chains"] == 0 for s in summaries)
    quality = {s["method"]: s["mean_selected_quality"] for s in summaries}
    assert quality["breaker_seeded"] < quality["seeds"]
    assert quality["breaker_seedless"] < quality["zeroshot_min"] < quality["zeroshot"]


def test_a_queued_run_reports_where_to_follow_it(
    tmp_path, sent_tasks, django_capture_on_commit_callbacks
):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(offline_config("seeds")))
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("run_breaker", str(path), "--name", "Queued", stdout=out)
    run = BreakerRun.objects.get(name="Queued")
    assert sent_tasks == [(ADVANCE_TASK, (run.pk, 0), {"queue": "slow", "countdown": None})]
    assert f"follow it at /search/breaker/{run.pk}/" in out.getvalue()


def test_a_bad_config_is_refused_with_its_reasons(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"name": "x", "method": "seeds"}))
    with pytest.raises(CommandError, match=r"invalid breaker configuration: .*tgt_lang"):
        call_command("run_breaker", str(path))
    assert BreakerRun.objects.count() == 0
