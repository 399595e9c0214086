"""Pages that must work with no network beyond this server: the API docs and the favicon.

Every request to another host is aborted and recorded, so a page that still pulls its scripts
or styles from a CDN shows up as a recorded request and as a blank page.
"""

from __future__ import annotations

import pytest

from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def offline_page(chromium, live_server, username: str):
    """A logged-in page whose requests to any other host are aborted; returns (page, outside)."""
    context = chromium.new_context()
    page = context.new_page()
    outside: list[str] = []

    def only_here(route):
        if route.request.url.startswith(live_server.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_here)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "correct horse battery")
    with page.expect_navigation():
        page.click("button[type=submit]")
    return page, outside


def test_api_docs_render_offline_for_staff(browser, live_server):
    UserFactory(username="staff", is_staff=True)
    page, outside = offline_page(browser, live_server, "staff")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    # Swagger UI draws only the operations near the viewport: a tall one shows many at once.
    page.set_viewport_size({"width": 1280, "height": 4000})
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .info .title")
    page.wait_for_selector(".opblock-tag")  # the operations, read from /api/schema/
    page.locator(".opblock").nth(10).wait_for()  # at least 11 operations drawn

    assert "Hardset API" in page.inner_text(".swagger-ui .info .title")
    assert (outside, errors) == ([], [])


def test_every_page_has_a_favicon(browser, live_server):
    UserFactory(username="someone")
    page, outside = offline_page(browser, live_server, "someone")

    href = page.get_attribute("link[rel=icon]", "href")
    icon = page.request.get(f"{live_server.url}{href}")
    legacy = page.request.get(f"{live_server.url}/favicon.ico")

    assert icon.status == 200
    assert icon.headers["content-type"] == "image/svg+xml"
    assert legacy.status == 200  # followed from /favicon.ico, which some clients ask for
    assert legacy.url == f"{live_server.url}{href}"
    assert outside == []
