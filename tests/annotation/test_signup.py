"""Recruitment: public sign-up, invite tokens, approval, Prolific links and completion codes."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Annotator, Enrollment
from annotation.services.campaigns import create_campaign
from annotation.services.claims import next_item_for
from annotation.services.submissions import submit_annotation
from tests.annotation.factories import enrolled, esa_answer, esa_campaign, esa_item

pytestmark = pytest.mark.django_db

FORM = {
    "username": "maria",
    "email": "",
    "password": "a long enough passphrase 42",
    "native_language": "German",
    "working_languages": "English, French",
    "consent": "on",
}


def test_open_signup_creates_account_profile_and_enrollment(client):
    campaign = esa_campaign(2)
    response = client.post(f"/annotation/join/{campaign.slug}/", FORM)
    assert response.status_code == 302
    assert response["Location"] == f"/annotation/campaigns/{campaign.pk}/next/"
    annotator = Annotator.objects.get(user__username="maria")
    assert (annotator.source, annotator.native_language, annotator.working_languages) == (
        "open", "German", ["English", "French"],
    )  # fmt: skip
    assert annotator.consent_at is not None and annotator.pseudonym.startswith("ann-")
    assert Enrollment.objects.get(annotator=annotator).status == "approved"
    assert client.get(response["Location"])["Location"].startswith("/annotation/items/")


def test_signup_needs_consent_and_writes_nothing_without_it(client):
    campaign = esa_campaign(1)
    response = client.post(f"/annotation/join/{campaign.slug}/", {**FORM, "consent": ""})
    assert response.status_code == 422
    assert not get_user_model().objects.filter(username="maria").exists()


def test_invite_token_is_required_when_set(client):
    campaign = esa_campaign(1, invite_token="s3cret")
    assert client.get(f"/annotation/join/{campaign.slug}/").status_code == 404
    assert client.get(f"/annotation/join/{campaign.slug}/?token=nope").status_code == 404
    assert client.post(f"/annotation/join/{campaign.slug}/", FORM).status_code == 404
    assert not Annotator.objects.exists()
    response = client.post(f"/annotation/join/{campaign.slug}/?token=s3cret", FORM)
    assert response.status_code == 302
    assert Annotator.objects.get().source == "invite"


def test_closed_signup_refuses(client):
    campaign = esa_campaign(1, signup_open=False)
    assert client.get(f"/annotation/join/{campaign.slug}/").status_code == 403
    assert client.post(f"/annotation/join/{campaign.slug}/", FORM).status_code == 403
    assert not Annotator.objects.exists()


def test_approval_required_then_admin_approves(client, admin_user):
    campaign = esa_campaign(1, require_approval=True)
    client.post(f"/annotation/join/{campaign.slug}/", FORM)
    page = client.get(f"/annotation/campaigns/{campaign.pk}/next/")
    assert page.status_code == 403 and "waiting for approval" in page.content.decode()
    enrollment = Enrollment.objects.get()
    admin = Client()
    admin.force_login(admin_user)
    admin.post(f"/annotation/enrollments/{enrollment.pk}/approve/")
    assert Enrollment.objects.get().status == "approved"
    assert client.get(f"/annotation/campaigns/{campaign.pk}/next/").status_code == 302


def test_logged_in_user_with_profile_joins_with_one_click(client):
    first, second = esa_campaign(1, name="First"), esa_campaign(1, name="Second")
    annotator = enrolled(first, "eva")
    client.force_login(annotator.user)
    page = client.get(f"/annotation/join/{second.slug}/")
    assert "Join this campaign with your existing profile" in page.content.decode()
    assert client.post(f"/annotation/join/{second.slug}/").status_code == 302
    assert Enrollment.objects.filter(annotator=annotator).count() == 2


PROLIFIC = "PROLIFIC_PID=5f1e2d3c4b5a&STUDY_ID=study9&SESSION_ID=sess1"


def test_prolific_link_creates_then_resumes_the_annotator(client):
    campaign = esa_campaign(2)
    url = f"/annotation/join/{campaign.slug}/?{PROLIFIC}"
    page = client.get(url)
    assert page.status_code == 200 and "Prolific participant" in page.content.decode()
    assert not Annotator.objects.exists()
    post = {"PROLIFIC_PID": "5f1e2d3c4b5a", "STUDY_ID": "study9", "SESSION_ID": "sess1",
            "native_language": "German", "working_languages": "English",
            "consent": "on"}  # fmt: skip
    response = client.post(f"/annotation/join/{campaign.slug}/", post)
    assert response.status_code == 302
    annotator = Annotator.objects.get()
    assert (annotator.source, annotator.prolific_pid, annotator.study_id, annotator.session_id) == (
        "prolific", "5f1e2d3c4b5a", "study9", "sess1",
    )  # fmt: skip
    assert not annotator.user.has_usable_password()
    assert Enrollment.objects.get().prolific_session_id == "sess1"
    item_url = client.get(response["Location"])["Location"]
    client.post("/accounts/logout/")
    # Coming back through the same link resumes the same annotator and the same item.
    again = client.get(f"/annotation/join/{campaign.slug}/?{PROLIFIC}")
    assert again.status_code == 302
    assert client.get(again["Location"])["Location"] == item_url
    assert Annotator.objects.count() == 1


def _entered(client, campaign, session_id: str = "sess1") -> Annotator:
    post = {"PROLIFIC_PID": "5f1e2d3c4b5a", "STUDY_ID": "study9", "SESSION_ID": session_id,
            "native_language": "German", "working_languages": "English",
            "consent": "on"}  # fmt: skip
    assert client.post(f"/annotation/join/{campaign.slug}/", post).status_code == 302
    return Annotator.objects.get(prolific_pid="5f1e2d3c4b5a")


@pytest.mark.parametrize("session", ["&SESSION_ID=guessed", "&SESSION_ID=", ""])
def test_a_known_prolific_pid_without_its_session_signs_nobody_in(client, session):
    campaign = esa_campaign(2)
    participant = _entered(Client(), campaign)
    url = f"/annotation/join/{campaign.slug}/?PROLIFIC_PID=5f1e2d3c4b5a&STUDY_ID=study9{session}"

    response = client.get(url)

    assert response.status_code == 403
    assert "already taken part here from another browser" in response.content.decode()
    assert "_auth_user_id" not in client.session
    participant.refresh_from_db()
    assert (participant.session_id, Annotator.objects.count()) == ("sess1", 1)
    assert Enrollment.objects.get().prolific_session_id == "sess1"


def test_a_known_prolific_pid_does_not_enter_a_new_study_from_another_browser(client):
    first, second = esa_campaign(1, name="First"), esa_campaign(1, name="Second")
    _entered(Client(), first)

    url = f"/annotation/join/{second.slug}/?PROLIFIC_PID=5f1e2d3c4b5a&SESSION_ID=new"
    response = client.get(url)

    assert response.status_code == 403
    assert "_auth_user_id" not in client.session
    assert list(Enrollment.objects.values_list("campaign__name", flat=True)) == ["First"]


def test_the_participants_own_browser_enters_their_next_study(client):
    first, second = esa_campaign(1, name="First"), esa_campaign(1, name="Second")
    participant = _entered(client, first)

    url = f"/annotation/join/{second.slug}/?PROLIFIC_PID=5f1e2d3c4b5a&SESSION_ID=sess2"
    response = client.get(url)

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(participant.user_id)
    sessions = dict(Enrollment.objects.values_list("campaign__name", "prolific_session_id"))
    assert sessions == {"First": "sess1", "Second": "sess2"}
    # Each study's own SESSION_ID resumes it from another browser; the other study's does not.
    assert Client().get(url).status_code == 302
    assert Client().get(url.replace(second.slug, first.slug)).status_code == 403


@pytest.mark.parametrize("pid", ["brand-new-pid", "5f1e2d3c4b5a"])
def test_a_prolific_link_never_replaces_a_signed_in_session(admin_client, admin_user, pid):
    campaign = esa_campaign(1)
    _entered(Client(), campaign)
    url = f"/annotation/join/{campaign.slug}/?PROLIFIC_PID={pid}&SESSION_ID=sess1"

    response = admin_client.get(url)

    assert response.status_code == 409
    page = response.content.decode()
    assert "You are signed in as admin. To take part as this Prolific participant" in page
    assert f'name="next" value="/annotation/join/{campaign.slug}/?PROLIFIC_PID={pid}' in page
    assert admin_client.session["_auth_user_id"] == str(admin_user.pk)
    assert Annotator.objects.count() == 1
    # Signing out comes back to the same link, which then works as for anyone.
    signed_out = admin_client.post(
        "/accounts/logout/", {"next": f"/annotation/join/{campaign.slug}/?PROLIFIC_PID={pid}"}
    )
    assert signed_out["Location"] == f"/annotation/join/{campaign.slug}/?PROLIFIC_PID={pid}"


def test_prolific_pid_cannot_take_over_a_password_account(client):
    campaign = esa_campaign(1)
    victim = enrolled(campaign, "victim")
    Annotator.objects.filter(pk=victim.pk).update(source="prolific", prolific_pid="abc")
    response = client.get(f"/annotation/join/{campaign.slug}/?PROLIFIC_PID=abc")
    assert response.status_code == 403
    assert "_auth_user_id" not in client.session


def _prolific_participant(client, campaign, pid: str) -> Annotator:
    post = {"PROLIFIC_PID": pid, "native_language": "de", "working_languages": "en",
            "consent": "on"}  # fmt: skip
    client.post(f"/annotation/join/{campaign.slug}/", post)
    return Annotator.objects.get(prolific_pid=pid)


@pytest.mark.parametrize(("check_score", "code"), [(20, "PASS123"), (95, "FAIL999")])
def test_completion_redirect_carries_the_qc_code(client, check_score, code):
    items = [esa_item(1), esa_item(2, kind="attention_check", expected={"score_max": 40})]
    campaign = create_campaign(
        "Prolific study", "esa", items, prolific_pass_code="PASS123",
        prolific_fail_code="FAIL999", qc_min_seconds_per_item=0,
    )  # fmt: skip
    annotator = _prolific_participant(client, campaign, "pid-1")
    for score in (80, check_score):
        item = next_item_for(annotator, campaign)
        submit_annotation(annotator, item, esa_answer(score))
    response = client.get(f"/annotation/campaigns/{campaign.pk}/next/")
    assert response["Location"] == f"/annotation/campaigns/{campaign.pk}/finish/"
    final = client.get(response["Location"])
    assert final.status_code == 302
    assert final["Location"] == f"https://app.prolific.com/submissions/complete?cc={code}"


def test_finish_is_not_reachable_before_the_end(client):
    campaign = esa_campaign(2, prolific_pass_code="P", prolific_fail_code="F")
    _prolific_participant(client, campaign, "pid-2")
    response = client.get(f"/annotation/campaigns/{campaign.pk}/finish/")
    assert response["Location"] == f"/annotation/campaigns/{campaign.pk}/next/"


def test_my_tasks_shows_progress(client):
    campaign = esa_campaign(4, name="Visible")
    annotator = enrolled(campaign, "ina")
    submit_annotation(annotator, next_item_for(annotator, campaign), esa_answer())
    client.force_login(annotator.user)
    page = client.get("/annotation/tasks/").content.decode()
    assert "Visible" in page and "1 submitted of 4" in page and annotator.pseudonym in page
