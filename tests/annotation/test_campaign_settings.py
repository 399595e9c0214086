"""The campaign settings page: plain labels, and a protocol that is fixed once work exists."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from annotation import services
from annotation.forms import CampaignForm
from annotation.models import Campaign
from tests.annotation.factories import enrolled, esa_answer, esa_campaign

pytestmark = pytest.mark.django_db


def settings_post(campaign: Campaign, **changes) -> dict:
    form = CampaignForm(instance=campaign)
    data = {
        name: field.initial if field.initial is not None else form.initial.get(name)
        for name, field in form.fields.items()
    }
    data = {name: value for name, value in data.items() if value is not None}
    for name in ("signup_open", "require_approval", "require_qualification", "mqm_allow_critical",
                 "multi_select", "ask_confidence"):  # fmt: skip
        if not data.get(name):
            data.pop(name, None)
    return data | changes


def test_the_protocol_can_change_while_nobody_has_started(admin_client):
    campaign = esa_campaign(2)

    response = admin_client.post(
        f"/annotation/campaigns/{campaign.pk}/settings/", settings_post(campaign, protocol="mqm")
    )

    assert response.status_code == 302
    assert Campaign.objects.get(pk=campaign.pk).protocol == "mqm"


def test_the_protocol_is_fixed_once_there_are_annotations(admin_client):
    campaign = esa_campaign(2)
    annotator = enrolled(campaign, "ann")
    services.submit_annotation(annotator, services.next_item_for(annotator, campaign), esa_answer())

    response = admin_client.post(
        f"/annotation/campaigns/{campaign.pk}/settings/",
        settings_post(campaign, protocol="mqm", overlap=2),
    )

    assert response.status_code == 422
    assert response.context["form"].errors["protocol"] == [
        "The protocol cannot be changed from esa once annotators have started: this campaign "
        "already has annotations. Create a new campaign for the other protocol."
    ]
    saved = Campaign.objects.get(pk=campaign.pk)
    assert (saved.protocol, saved.overlap) == ("esa", 1)


def test_a_claimed_draft_also_fixes_the_protocol():
    campaign = esa_campaign(1)
    annotator = enrolled(campaign, "ann")
    services.next_item_for(annotator, campaign)  # opens a draft annotation

    campaign.protocol = "choice"
    with pytest.raises(ValidationError) as error:
        campaign.full_clean()

    assert list(error.value.message_dict) == ["protocol"]


def test_settings_have_plain_labels_and_help(admin_client):
    campaign = esa_campaign(1)

    page = admin_client.get(f"/annotation/campaigns/{campaign.pk}/settings/").content.decode()

    for internal in ("Claim ttl seconds", "Qc min pass rate", "Qc max fast fraction"):
        assert internal not in page
    assert "Time to finish an item (seconds)" in page
    assert "goes back to the pool" in page
    assert "Attention checks to pass" in page
    assert "Cannot be changed once there are annotations." in page
