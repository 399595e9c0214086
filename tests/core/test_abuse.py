"""Login lockout, API throttles and when Basic auth is accepted."""

from __future__ import annotations

import base64

import pytest
from axes.utils import reset
from django.test import Client

from tests.factories import UserFactory

# Login lockout counts failed checks of real password hashes.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("real_password_hashers")]

PASSWORD = "correct horse battery"


@pytest.fixture
def user():
    return UserFactory(username="carol")


def _login(client: Client, password: str, address: str = "10.0.0.1"):
    return client.post(
        "/accounts/login/", {"username": "carol", "password": password}, REMOTE_ADDR=address
    )


def test_the_login_form_locks_an_account_out_from_an_address_after_failures(user, settings):
    client = Client()
    codes = [_login(client, "wrong").status_code for _ in range(settings.AXES_FAILURE_LIMIT)]
    assert codes == [200] * (settings.AXES_FAILURE_LIMIT - 1) + [429]

    locked = _login(client, PASSWORD)

    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session
    # By account and address: the same account from elsewhere still logs in.
    other = Client()
    assert _login(other, PASSWORD, address="10.0.0.2").status_code == 302
    reset(username="carol")
    assert _login(client, PASSWORD).status_code == 302


def _basic(password: str) -> dict:
    token = base64.b64encode(f"carol:{password}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}", "REMOTE_ADDR": "10.0.0.3"}


def test_api_basic_auth_locks_out_after_failures(user, settings):
    settings.API_BASIC_AUTH = True
    client = Client()
    assert client.get("/api/campaigns/", **_basic(PASSWORD)).status_code == 200
    for _ in range(settings.AXES_FAILURE_LIMIT):
        assert client.get("/api/campaigns/", **_basic("wrong")).status_code in (401, 403)

    locked = client.get("/api/campaigns/", **_basic(PASSWORD))

    assert locked.status_code in (401, 403, 429)


def test_basic_auth_is_refused_unless_enabled(user, settings):
    settings.API_BASIC_AUTH = False

    response = Client().get("/api/campaigns/", **_basic(PASSWORD))

    assert response.status_code in (401, 403)


def test_the_api_throttles_a_user(user, settings):
    settings.API_THROTTLE_USER = "3/minute"
    client = Client()
    client.force_login(user)

    codes = [client.get("/api/campaigns/").status_code for _ in range(4)]

    assert codes == [200, 200, 200, 429]


def test_all_digit_passwords_are_refused():
    from django.contrib.auth.password_validation import validate_password
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="entirely numeric"):
        validate_password("83920174659201")


def test_schema_and_docs_are_staff_only_and_self_hosted(user, admin_client):
    client = Client()
    assert client.get("/api/schema/").status_code in (401, 403)
    assert client.get("/api/docs/").status_code in (302, 401, 403)
    client.force_login(user)
    assert client.get("/api/schema/").status_code == 403
    assert client.get("/api/docs/").status_code in (302, 403)

    docs = admin_client.get("/api/docs/")

    assert docs.status_code == 200
    html = docs.content.decode()
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert admin_client.get("/api/schema/").status_code == 200
