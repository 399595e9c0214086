"""The ranking demo's adaptive campaign, and its jobs skipped without the difficulty demo (the
jobs themselves: tests/core/test_load_demo.py, which runs every app's demo)."""

import io

import pytest

from annotation.models import Campaign
from ranking import demo
from ranking.models import SystemRanking

pytestmark = pytest.mark.django_db


def test_the_adaptive_campaign_is_made_and_the_jobs_wait_for_the_difficulty_demo():
    out = io.StringIO()
    demo.load_demo(out)

    assert "no 'Synthetic demo" in out.getvalue()
    assert not SystemRanking.objects.exists()
    campaign = Campaign.objects.get()
    assert (campaign.assignment_policy, campaign.assignment_goal) == ("settle", "top")
    assert sorted(set(campaign.items.values_list("system", flat=True))) == sorted(demo._SYSTEMS)
    assert campaign.items.count() == 24
