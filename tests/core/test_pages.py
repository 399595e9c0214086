import pytest


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/dashboard/", "/health/"])
def test_pages_require_login(client, path):
    response = client.get(path)

    assert response.status_code == 302
    assert "/login/" in response["Location"]


@pytest.mark.parametrize("path", ["/dashboard/", "/health/"])
def test_staff_pages_turn_annotators_away(annotator_client, path):
    response = annotator_client.get(path)

    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_admin_lands_on_the_dashboard(admin_client):
    response = admin_client.get("/", follow=True)

    assert response.redirect_chain == [("/dashboard/", 302)]
    html = response.content.decode()
    assert "<h1>Dashboard</h1>" in html
    assert "Platform health" in html


def test_login_page_logs_a_user_in(client, admin_user):
    response = client.post(
        "/accounts/login/", {"username": "admin", "password": "correct horse battery"}
    )

    assert response.status_code == 302
    assert response["Location"] == "/"


def test_login_page_rejects_a_wrong_password(client, admin_user):
    response = client.post("/accounts/login/", {"username": "admin", "password": "nope"})

    assert response.status_code == 200
    assert "did not match" in response.content.decode()


def test_logout_is_a_post(admin_client):
    response = admin_client.post("/accounts/logout/")

    assert response.status_code == 302
    assert admin_client.get("/dashboard/").status_code == 302


def test_base_page_serves_htmx_from_static_and_sets_the_csrf_header(admin_client):
    html = admin_client.get("/dashboard/").content.decode()

    assert "/static/vendor/htmx/htmx.min.js" in html
    assert "hx-headers='{&quot;X-CSRFToken&quot;" in html or 'hx-headers=\'{"X-CSRFToken"' in html
    assert "cdn" not in html.lower()


def test_api_schema_is_served(admin_client):
    response = admin_client.get("/api/schema/")

    assert response.status_code == 200
    assert b"openapi" in response.content
