"""The ranking demo: built on the synthetic difficulty demo, finished, idempotent by name, with
an adaptive campaign over three systems."""

import io

import pytest

from annotation.models import Campaign
from difficulty import demo as difficulty_demo
from ranking import demo
from ranking.models import SystemRanking
from ranking.replays.models import ReplayRun
from ranking.subsets.models import DiscriminationAnalysis

pytestmark = pytest.mark.django_db


def test_the_demo_ranks_measures_and_replays_the_synthetic_dataset_once():
    assert "no 'Synthetic demo" in _load()  # nothing to build on yet: skipped, nothing made
    assert not SystemRanking.objects.exists()

    difficulty_demo.load_demo(io.StringIO())
    _load()
    assert "already there" in _load()

    ranking = SystemRanking.objects.get()
    analysis = DiscriminationAnalysis.objects.get()
    replay = ReplayRun.objects.get()
    assert ranking.status == analysis.status == SystemRanking.Status.DONE
    assert replay.status == ReplayRun.Status.FINISHED
    assert all("synthetic" in job.name for job in (ranking, analysis, replay))
    systems = ranking.result["ranking"]["systems"]
    assert sorted(systems) == [f"demo-mt-{i}" for i in range(1, 6)]  # the reference left out
    assert len(replay.result["summary"]) == len(replay.policies)  # a row of budgets per policy

    campaign = Campaign.objects.get()  # made on the first call already, once
    assert (campaign.assignment_policy, campaign.assignment_goal) == ("settle", "top")
    assert sorted(set(campaign.items.values_list("system", flat=True))) == sorted(demo._SYSTEMS)
    assert campaign.items.count() == 24


def _load() -> str:
    out = io.StringIO()
    demo.load_demo(out)
    return out.getvalue()
