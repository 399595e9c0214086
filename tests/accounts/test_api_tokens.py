"""Personal API tokens: made and revoked on the user's page, hashed, shown once, scoped."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from accounts import services
from accounts.models import ApiToken
from annotation.models import Annotation, Assignment
from tests.annotation.factories import enrolled, esa_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _bearer(secret: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def _refused(response, detail: str = "Invalid, expired or revoked token.") -> bool:
    # 403, not 401: session auth comes first, so the API sends no WWW-Authenticate challenge.
    return response.status_code == 403 and response.json()["detail"] == detail


def test_a_token_is_made_on_the_users_page_shown_once_and_stored_hashed(annotator_client):
    assert "/accounts/tokens/" in annotator_client.get("/annotation/tasks/").content.decode()

    page = annotator_client.post("/accounts/tokens/", {"name": "export script"})

    assert page.status_code == 200
    secret = re.search(r'<pre id="new-token">(hs_[^<]+)</pre>', page.content.decode()).group(1)
    token = ApiToken.objects.get()
    assert token.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in {token.prefix, token.digest, token.name} and secret.startswith(
        token.prefix
    )
    assert page["Cache-Control"].startswith("max-age=0")
    again = annotator_client.get("/accounts/tokens/").content.decode()
    assert secret not in again and token.prefix in again


def test_a_token_authenticates_api_requests_until_revoked(annotator_user, annotator_client):
    token, secret = services.create_token(annotator_user, "script")
    api = Client()
    assert api.get("/api/campaigns/", **_bearer(secret)).status_code == 200
    assert ApiToken.objects.get().last_used_at is not None

    annotator_client.post(f"/accounts/tokens/{token.pk}/revoke/")

    assert _refused(api.get("/api/campaigns/", **_bearer(secret)))
    assert ApiToken.objects.get().revoked_at is not None


def test_unknown_and_expired_tokens_are_refused(annotator_user):
    _token, secret = services.create_token(
        annotator_user, "old", expires_at=timezone.now() - timedelta(seconds=1)
    )
    api = Client()

    assert _refused(api.get("/api/campaigns/", **_bearer(secret)))
    assert _refused(api.get("/api/campaigns/", **_bearer("hs_not-a-token")))
    assert _refused(
        api.get("/api/campaigns/", **_bearer("a b")), "Give the token as 'Bearer <token>'."
    )


@override_settings(API_THROTTLE_FAILED_TOKEN="3/minute")
def test_failed_tokens_are_throttled_per_client_address(annotator_user):
    _token, secret = services.create_token(annotator_user, "script")
    api = Client()
    guesses = [api.get("/api/campaigns/", **_bearer(f"hs_guess{n}")) for n in range(3)]

    throttled = api.get("/api/campaigns/", **_bearer("hs_guess3"))
    # Blocked before the lookup: a right token from that address gets nothing either.
    right_but_blocked = api.get("/api/campaigns/", **_bearer(secret))
    elsewhere = api.get("/api/campaigns/", REMOTE_ADDR="10.0.0.2", **_bearer(secret))

    assert all(_refused(response) for response in guesses)
    assert throttled.status_code == 429 and int(throttled["Retry-After"]) > 0
    assert throttled.json()["detail"].startswith("Request was throttled.")
    assert right_but_blocked.status_code == 429
    assert elsewhere.status_code == 200


def test_a_read_only_token_may_only_read(admin_user):
    _token, secret = services.create_token(admin_user, "ro", read_only=True)
    api = Client()

    assert api.get("/api/engines/", **_bearer(secret)).status_code == 200
    response = api.post(
        "/api/engines/", {"name": "x"}, content_type="application/json", **_bearer(secret)
    )
    assert response.status_code == 403
    assert response.json()["detail"] == "This token is read-only."


def test_a_read_only_token_cannot_claim_an_item_through_next_item():
    campaign = esa_campaign()
    annotator = enrolled(campaign, "reader")
    _t, read_only = services.create_token(annotator.user, "ro", read_only=True)
    _t, read_write = services.create_token(annotator.user, "rw")
    url = f"/api/campaigns/{campaign.pk}/next-item/"
    api = Client()

    response = api.get(url, **_bearer(read_only))

    assert response.status_code == 403
    assert response.json()["detail"] == "This token is read-only."
    assert (Assignment.objects.count(), Annotation.objects.count()) == (0, 0)
    claimed = api.get(url, **_bearer(read_write))
    assert claimed.status_code == 200
    assert Assignment.objects.filter(annotator=annotator).count() == 1


def test_a_read_write_token_writes_with_its_users_permissions(admin_user, annotator_user):
    _t, admin_secret = services.create_token(admin_user, "rw")
    _t, annotator_secret = services.create_token(annotator_user, "rw")
    body = {
        "name": "syn",
        "kind": "synthetic",
        "capabilities": ["difficulty"],
        "params": {"n_topics": 3},
    }
    api = Client()

    refused = api.post(
        "/api/engines/", body, content_type="application/json", **_bearer(annotator_secret)
    )
    made = api.post("/api/engines/", body, content_type="application/json", **_bearer(admin_secret))

    assert refused.status_code == 403
    assert made.status_code == 201


def test_nobody_revokes_another_users_token(annotator_user, outsider_user):
    token, _secret = services.create_token(annotator_user, "mine")
    other = Client()
    other.force_login(outsider_user)

    assert other.post(f"/accounts/tokens/{token.pk}/revoke/").status_code == 404
    assert ApiToken.objects.get().revoked_at is None
    assert "mine" not in other.get("/accounts/tokens/").content.decode()


def test_an_inactive_users_token_is_refused():
    user = UserFactory(username="gone")
    _token, secret = services.create_token(user, "t")
    user.is_active = False
    user.save()

    assert _refused(Client().get("/api/campaigns/", **_bearer(secret)))


def test_the_token_page_needs_a_login(client):
    assert client.get("/accounts/tokens/").status_code == 302
