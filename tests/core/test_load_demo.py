"""``manage.py load_demo``: every app's demo, in the order they build on each other (the ranking
demo needs the difficulty demo's dataset). The one test of the whole command: it costs ~30 s."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from ranking import demo as ranking_demo
from ranking.models import SystemRanking
from ranking.replays.models import ReplayRun
from ranking.subsets.models import DiscriminationAnalysis
from search.demo import TOPIC_DEMO_NAME
from search.models import TextSample, TopicTree

pytestmark = pytest.mark.django_db


def test_load_demo_builds_every_apps_demo_and_the_ranking_demo_once():
    out = StringIO()
    call_command("load_demo", stdout=out)

    assert f"search: topic tree {TOPIC_DEMO_NAME!r}" in out.getvalue()
    assert TopicTree.objects.filter(name=TOPIC_DEMO_NAME).count() == 1
    assert TextSample.objects.filter(topic__tree__name=TOPIC_DEMO_NAME).count() == 60

    ranking = SystemRanking.objects.get(name=ranking_demo.RANKING_NAME)
    analysis = DiscriminationAnalysis.objects.get(name=ranking_demo.ANALYSIS_NAME)
    replay = ReplayRun.objects.get(name=ranking_demo.REPLAY_NAME)
    assert ranking.status == analysis.status == SystemRanking.Status.DONE
    assert replay.status == ReplayRun.Status.FINISHED
    assert sorted(ranking.result["ranking"]["systems"]) == [f"demo-mt-{i}" for i in range(1, 6)]
    assert len(replay.result["summary"]) == len(replay.policies)  # a row of budgets per policy

    again = StringIO()
    ranking_demo.load_demo(again)
    assert again.getvalue().count("already there") == 4
    assert SystemRanking.objects.count() == ReplayRun.objects.count() == 1
