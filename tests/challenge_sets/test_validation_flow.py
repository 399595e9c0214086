"""Send for validation → annotators → results through the QC-aware selector → proposals.

A careless annotator who fails the attention check changes nothing: the same human
difficulty, agreement and proposal whether they score every translation 0 or 100.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Item
from annotation.services.campaigns import add_items
from challenge_sets import services, validation
from challenge_sets.models import ORIGIN, ChallengeItem
from tests.challenge_sets.conftest import CHECK, ROWS, judge, make_set

pytestmark = pytest.mark.django_db


def _results(challenge_set):
    return [
        (i.origin_ref, i.validation, i.human_difficulty, i.agreement, i.n_judgments, i.proposal)
        for i in ChallengeItem.objects.filter(challenge_set=challenge_set).order_by("id")
    ]


def test_send_makes_a_campaign_from_the_policy_with_generic_references():
    challenge_set = make_set(rows=ROWS[:2], overlap=3, qc_min_seconds_per_item=4)
    sent, unsendable = validation.send_for_validation(challenge_set)
    assert (sent, unsendable) == (2, 0)
    campaign = challenge_set.campaign
    assert (campaign.protocol, campaign.overlap, campaign.qc_min_seconds_per_item) == ("esa", 3, 4)
    items = Item.objects.filter(campaign=campaign).order_by("id")
    assert [i.system for i in items] == ["mt-a", "mt-b", "mt-a"]  # one per translation
    assert {i.origin for i in items} == {ORIGIN}
    first = ChallengeItem.objects.filter(challenge_set=challenge_set).order_by("id").first()
    assert items[0].origin_ref == f"cs:{challenge_set.pk}:item:{first.pk}:mt-a"
    assert set(ChallengeItem.objects.values_list("validation", flat=True)) == {"sent"}
    with pytest.raises(services.ChallengeSetError, match="nothing to send"):
        validation.send_for_validation(challenge_set)


@pytest.mark.parametrize("careless_score", [0, 100])
def test_results_flow_back_and_a_failing_annotator_changes_nothing(
    careless_score, django_capture_on_commit_callbacks
):
    challenge_set = make_set(rows=ROWS[:2], overlap=2, threshold=30)
    validation.send_for_validation(challenge_set)
    campaign = challenge_set.campaign
    add_items(campaign, [CHECK])

    with django_capture_on_commit_callbacks(execute=True):
        judge(campaign, "careful", score=40)
        judge(campaign, "careless", score=careless_score, check_score=10)

    refs = [i.origin_ref for i in ChallengeItem.objects.order_by("id")]
    # Only the careful annotator counts: difficulty 100 − 40 = 60 ≥ 30 → accept.
    assert _results(challenge_set) == [
        (refs[0], "validated", 60.0, None, 1, "accept"),
        (refs[1], "validated", 60.0, None, 1, "accept"),
    ]
    item = ChallengeItem.objects.order_by("id").first()
    assert sorted(item.human["verdicts"].values()) == ["fail", "pass"]
    assert item.human["scores"] == {"mt-a": 40.0, "mt-b": 40.0}
    # A refresh reads the same through the selector.
    assert validation.refresh_results(challenge_set) == 2
    assert [r[2:] for r in _results(challenge_set)] == [(60.0, None, 1, "accept")] * 2


def test_two_passing_annotators_give_agreement_and_the_threshold_rejects():
    challenge_set = make_set(rows=ROWS[2:], overlap=2, threshold=50, min_agreement=0.5)
    validation.send_for_validation(challenge_set)
    campaign = challenge_set.campaign
    judge(campaign, "one", score=80)
    judge(campaign, "two", score=60)
    validation.refresh_results(challenge_set)
    (item,) = ChallengeItem.objects.filter(challenge_set=challenge_set)
    # difficulty 100 − 70 = 30 < 50; agreement 1 − |80 − 60| / 100 = 0.8 ≥ 0.5.
    assert (item.human_difficulty, item.agreement, item.proposal) == (30.0, 0.8, "reject")
    assert item.proposal_reason == "human difficulty 30.0 < 50"


def test_decisions_need_reasons_and_are_logged_one_by_one():
    challenge_set = make_set()
    ids = list(ChallengeItem.objects.values_list("id", flat=True).order_by("id"))
    with pytest.raises(services.ChallengeSetError, match="needs a reason"):
        services.decide_items(challenge_set, ids[:2], "rejected")
    assert services.decide_items(challenge_set, ids[:2], "rejected", reason="too easy") == 2
    assert services.decide_items(challenge_set, ids[2:], "accepted") == 1
    log = challenge_set.audit.filter(action="decided").order_by("id")
    assert [(e.item_id, e.from_status, e.to_status, e.reason) for e in log] == [
        (ids[0], "pending", "rejected", "too easy"),
        (ids[1], "pending", "rejected", "too easy"),
        (ids[2], "pending", "accepted", ""),
    ]


def test_the_set_page_leads_to_the_campaigns_sign_up_link(curator_client):
    # Regression: the set linked only the live dashboard, which does not show the sign-up link.
    challenge_set = make_set(rows=ROWS[:1])
    page = curator_client.get(reverse("challenge_sets:set_detail", args=[challenge_set.pk]))
    assert "not sent yet" in page.content.decode()
    validation.send_for_validation(challenge_set)
    html = curator_client.get(
        reverse("challenge_sets:set_detail", args=[challenge_set.pk])
    ).content.decode()
    campaign_page = reverse("annotation:campaign_detail", args=[challenge_set.campaign_id])
    assert f'href="{campaign_page}"' in html
    signup = curator_client.get(campaign_page).content.decode()
    assert reverse("annotation:signup", args=[challenge_set.campaign.slug]) in signup
