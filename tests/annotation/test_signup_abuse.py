"""Sign-up abuse: a throttle per address and campaign, invite tokens, weak passwords."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Annotator
from tests.annotation.factories import esa_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _form(name: str, **overrides) -> dict:
    return {
        "username": name, "email": "", "password": "a long enough passphrase 42",
        "native_language": "German", "working_languages": "English", "consent": "on",
    } | overrides  # fmt: skip


def test_signups_are_throttled_per_address_and_campaign(client, settings):
    settings.SIGNUP_ATTEMPTS_PER_HOUR = 3
    campaign, other = esa_campaign(1), esa_campaign(1, name="Other")
    url = f"/annotation/join/{campaign.slug}/"
    for n in range(3):
        client.post(url, _form(f"user{n}"), REMOTE_ADDR="10.1.0.1")
        client.logout()

    refused = client.post(url, _form("user9"), REMOTE_ADDR="10.1.0.1")

    assert refused.status_code == 429
    assert "Too many sign-ups" in refused.content.decode()
    assert not get_user_model().objects.filter(username="user9").exists()
    assert Annotator.objects.count() == 3
    # Another campaign, or another address, is not affected.
    assert (
        client.post(
            f"/annotation/join/{other.slug}/", _form("user10"), REMOTE_ADDR="10.1.0.1"
        ).status_code
        == 302
    )
    client.logout()
    assert client.post(url, _form("user11"), REMOTE_ADDR="10.1.0.2").status_code == 302


def test_an_invite_token_is_given_as_invite(client):
    campaign = esa_campaign(1, invite_token="s3cret-invite")
    url = f"/annotation/join/{campaign.slug}/"

    assert client.get(url).status_code == 404
    assert client.get(f"{url}?invite=wrong").status_code == 404
    page = client.get(f"{url}?invite=s3cret-invite")
    assert page.status_code == 200
    assert 'name="invite" value="s3cret-invite"' in page.content.decode()
    assert client.post(f"{url}?invite=s3cret-invite", _form("maria")).status_code == 302
    assert Annotator.objects.get().source == "invite"


def test_all_digit_passwords_are_refused_at_sign_up(client):
    campaign = esa_campaign(1)

    response = client.post(
        f"/annotation/join/{campaign.slug}/", _form("maria", password="83920174659201")
    )

    assert response.status_code == 422
    assert "entirely numeric" in response.content.decode()
    assert not Annotator.objects.exists()


def test_taken_names_are_told_a_few_times_an_hour_per_address_across_campaigns(client, settings):
    # Telling a person that their name is taken also tells a script that the account exists:
    # a list of names checked one campaign after another (each with its own sign-up count)
    # gets that answer SIGNUP_ATTEMPTS_PER_HOUR times, then refusals that say nothing.
    settings.SIGNUP_ATTEMPTS_PER_HOUR = 3
    for name in ("alice", "bob", "carol", "dave"):
        UserFactory(username=name)
    campaigns = [esa_campaign(1, name=f"Study {n}") for n in range(6)]

    def post(campaign, name, address="10.2.0.1"):
        return client.post(f"/annotation/join/{campaign.slug}/", _form(name), REMOTE_ADDR=address)

    told = [
        post(campaign, name)
        for campaign, name in zip(campaigns[:3], ["alice", "bob", "carol"], strict=True)
    ]
    after = [post(campaigns[3], "dave"), post(campaigns[4], "a-free-name")]

    assert [r.status_code for r in told] == [422, 422, 422]
    assert all("That name is taken" in r.content.decode() for r in told)
    assert [r.status_code for r in after] == [429, 429]
    assert not any("That name is taken" in r.content.decode() for r in after)
    assert not Annotator.objects.exists()
    assert not get_user_model().objects.filter(username="a-free-name").exists()
    # A Prolific participant at that address still starts (no name is asked of them).
    prolific = {"PROLIFIC_PID": "pid-1", "native_language": "German",
                "working_languages": "English", "consent": "on"}  # fmt: skip
    started = client.post(
        f"/annotation/join/{campaigns[5].slug}/", prolific, REMOTE_ADDR="10.2.0.1"
    )
    assert started.status_code == 302
    client.logout()
    # Another address still signs up, and is told about a taken name.
    assert "That name is taken" in post(campaigns[5], "dave", "10.2.0.2").content.decode()
    assert post(campaigns[5], "erin", "10.2.0.2").status_code == 302
