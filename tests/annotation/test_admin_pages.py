"""Admin pages: campaign list query count, pause from the annotators page, generated checks, the
sign-up card of a closed campaign."""

from __future__ import annotations

import pytest

from annotation.models import Enrollment, Item
from annotation.refusals import NotAllowed
from annotation.services.campaigns import create_campaign
from annotation.services.claims import next_item_for
from tests.annotation.factories import enrolled, esa_campaign

pytestmark = pytest.mark.django_db


def test_campaign_list_query_count_does_not_grow(admin_client, django_assert_max_num_queries):
    for n in range(3):
        campaign = esa_campaign(2, name=f"C{n}")
        enrolled(campaign, f"user{n}")
    admin_client.get("/annotation/campaigns/")  # warm the session
    with django_assert_max_num_queries(4):
        response = admin_client.get("/annotation/campaigns/")
    assert response.status_code == 200
    for _ in range(5):
        esa_campaign(1)
    with django_assert_max_num_queries(4):
        admin_client.get("/annotation/campaigns/")


def test_pause_and_resume_from_the_annotators_page(admin_client):
    campaign = esa_campaign(2)
    annotator = enrolled(campaign, "someone")
    enrollment = Enrollment.objects.get(annotator=annotator)
    response = admin_client.post(
        f"/annotation/enrollments/{enrollment.pk}/pause/", {"next": "annotators"}
    )
    assert response["Location"] == "/annotation/annotators/"
    assert Enrollment.objects.get().status == "paused"
    with pytest.raises(NotAllowed):
        next_item_for(annotator, campaign)
    admin_client.post(f"/annotation/enrollments/{enrollment.pk}/resume/")
    assert Enrollment.objects.get().status == "approved"
    assert admin_client.post(f"/annotation/enrollments/{enrollment.pk}/explode/").status_code == 404


def test_generate_checks_from_the_campaign_page(admin_client):
    items = [
        {"doc_id": "d", "seg_id": i, "source": "s", "target": f"Ein Satz mit Wörtern Nummer {i}."}
        for i in range(4)
    ]
    campaign = create_campaign("Checks page", "esa", items)
    response = admin_client.post(
        f"/annotation/campaigns/{campaign.pk}/checks/generate/", {"count": 2, "seed": 11}
    )
    assert response.status_code == 302
    checks = Item.objects.filter(campaign=campaign, kind="attention_check")
    assert checks.count() == 2
    assert all(c.expected["type"] == "corrupted" for c in checks)


def test_campaign_page_shows_signup_and_prolific_links(admin_client):
    campaign = esa_campaign(1, invite_token="tok")
    page = admin_client.get(f"/annotation/campaigns/{campaign.pk}/").content.decode()
    assert f"/annotation/join/{campaign.slug}/?invite=tok" in page
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in page


def test_a_closed_campaigns_page_says_sign_up_is_closed_with_it(admin_client):
    campaign = esa_campaign(1)  # sign-up switched on, as by default
    url = f"/annotation/campaigns/{campaign.pk}/"
    assert '<span class="badge ok">open</span>' in admin_client.get(url).content.decode()
    campaign.status = campaign.Status.CLOSED
    campaign.save(update_fields=["status"])
    assert "closed with the campaign" in admin_client.get(url).content.decode()
