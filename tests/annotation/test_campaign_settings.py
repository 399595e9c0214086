"""The campaign settings page: plain labels, and a protocol that is fixed once work exists."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.forms import CampaignForm
from annotation.models import Campaign
from annotation.selectors import describe_item_counts
from annotation.services.campaigns import generate_attention_checks
from annotation.services.claims import next_item_for
from annotation.services.submissions import submit_annotation
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
    submit_annotation(annotator, next_item_for(annotator, campaign), esa_answer())

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
    next_item_for(annotator, campaign)  # opens a draft annotation

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


def test_item_counts_agree_between_pages(admin_client):
    lines = [
        json.dumps({"doc_id": "d", "seg_id": i, "source": "s", "target": f"Ein Satz Nummer {i}."})
        for i in range(4)
    ] + [
        json.dumps(
            {
                "doc_id": "t",
                "seg_id": 1,
                "source": "s",
                "target": "Probe.",
                "kind": "tutorial",
                "expected": {"score_min": 90},
            }
        )
    ]
    upload = SimpleUploadedFile("items.jsonl", "\n".join(lines).encode(), "application/jsonl")
    form = settings_post(Campaign(), name="Counted", protocol="esa")
    response = admin_client.post(
        "/annotation/campaigns/new/", form | {"items_file": upload, "file_format": "jsonl"},
        follow=True,
    )  # fmt: skip
    campaign = Campaign.objects.get(name="Counted")
    generate_attention_checks(campaign, 2, np.random.default_rng(11))

    assert "Imported 4 items (+ 1 tutorial item) into Counted." in response.content.decode()
    assert describe_item_counts(campaign) == "4 items (+ 2 attention checks, 1 tutorial item)"
    listing = admin_client.get("/annotation/campaigns/").content.decode()
    detail = admin_client.get(f"/annotation/campaigns/{campaign.pk}/").content.decode()
    dashboard = admin_client.get("/annotation/dashboard/").content.decode()
    assert '<td class="num">4</td>' in listing
    assert "0 / 4</p>" in detail
    assert "4 regular · 2 attention checks · 1 tutorial" in detail
    assert '<td class="num">4</td>' in dashboard
