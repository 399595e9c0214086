"""Engine pages, API and permissions, through HTTP."""

from __future__ import annotations

import pytest
from django.test import Client

from engines.models import Engine, EngineCall
from tests.engines.factories import EngineFactory, SyntheticEngineFactory
from tests.engines.fake_openai import Reply

pytestmark = pytest.mark.django_db

SECRET = "sk-test-must-never-appear-0123456789"


@pytest.fixture
def llm(fake_openai, monkeypatch):
    monkeypatch.setenv("HARDSET_ENGINE_KEY_PAGES", SECRET)
    return EngineFactory(
        name="llm", base_url=fake_openai.base_url, api_key_env="HARDSET_ENGINE_KEY_PAGES"
    )


def _form(**overrides):
    data = {
        "name": "gpt",
        "kind": "openai_chat",
        "capabilities": ["chat", "translate"],
        "description": "",
        "model": "gpt-4o-mini",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "OPENAI_API_KEY",
        "params": '{"temperature": 0}',
        "price_in_per_1k": "0.15",
        "price_out_per_1k": "0.6",
        "max_concurrency": "8",
        "timeout_s": "30",
        "max_retries": "3",
        "enabled": "on",
    }
    data.update(overrides)
    return data


def test_list_shows_engines_with_totals_and_the_synthetic_badge(admin_client, llm):
    SyntheticEngineFactory(name="syn")
    EngineCall.objects.create(engine=llm, operation="translate", items=3, cost="0.25")

    html = admin_client.get("/engines/").content.decode()

    assert '<a href="/engines/llm/">llm</a>' in html
    assert 'class="badge synthetic">synthetic<' in html
    assert "$0.2500" in html


def test_list_query_count_does_not_grow_with_engines(admin_client, django_assert_max_num_queries):
    for i in range(8):
        EngineFactory(name=f"e{i}")
    with django_assert_max_num_queries(6):
        admin_client.get("/engines/")


def test_create_engine_through_the_form(admin_client):
    response = admin_client.post("/engines/new/", _form())

    assert response.status_code == 302
    assert response["Location"] == "/engines/gpt/"
    engine = Engine.objects.get(name="gpt")
    assert (engine.capabilities, engine.params, engine.max_concurrency) == (
        ["chat", "translate"],
        {"temperature": 0},
        8,
    )


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"params": '{"temperature": 5}'}, "temperature must be a number from 0 to 2"),
        ({"params": '{"colour": 1}'}, "unknown parameter &#x27;colour&#x27;"),
        ({"kind": "heuristic", "params": "{}"}, "feature is required"),
        ({"base_url": ""}, "needs a base URL"),
        ({"api_key_env": "sk-abc 123"}, "name of an environment variable"),
        ({"name": "new"}, "reserved"),
    ],
)
def test_form_rejects_invalid_configuration(admin_client, overrides, message):
    response = admin_client.post("/engines/new/", _form(**overrides))

    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Engine.objects.exists()


def test_edit_engine(admin_client, llm):
    response = admin_client.post(
        "/engines/llm/edit/", _form(name="llm", base_url=llm.base_url, max_concurrency="2")
    )

    assert response.status_code == 302
    llm.refresh_from_db()
    assert llm.max_concurrency == 2


def test_detail_shows_the_key_variable_name_but_never_the_key(admin_client, llm):
    html = admin_client.get("/engines/llm/").content.decode()

    assert "HARDSET_ENGINE_KEY_PAGES" in html
    assert ">set<" in html
    assert SECRET not in html


def test_htmx_test_button_returns_the_partial_with_output_and_latency(
    admin_client, llm, fake_openai
):
    fake_openai.push(Reply.translation("Der Ausschuss vertagte."))

    response = admin_client.post("/engines/llm/test/", HTTP_HX_REQUEST="true")

    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="test-result"')
    assert "Der Ausschuss vertagte." in html
    assert " ms</span>" in html
    assert "<html" not in html
    assert fake_openai.requests[0].headers["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in html


def test_test_button_without_javascript_renders_the_whole_page(admin_client, llm, fake_openai):
    fake_openai.push(Reply.error(401, "invalid api key"))

    html = admin_client.post("/engines/llm/test/").content.decode()

    assert "<html" in html
    assert "permanent error" in html
    assert "HTTP 401" in html


def test_test_button_twice_calls_twice(admin_client, llm, fake_openai):
    admin_client.post("/engines/llm/test/", HTTP_HX_REQUEST="true")
    admin_client.post("/engines/llm/test/", HTTP_HX_REQUEST="true")

    assert len(fake_openai.requests) == 2  # the check bypasses the cache


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/engines/"),
        ("get", "/engines/new/"),
        ("get", "/engines/llm/"),
        ("get", "/engines/llm/edit/"),
        ("post", "/engines/llm/test/"),
        ("post", "/engines/new/"),
        ("post", "/engines/llm/edit/"),
    ],
)
def test_annotators_are_turned_away_and_nothing_changes(
    annotator_client, llm, fake_openai, method, path
):
    response = getattr(annotator_client, method)(path, _form(name="llm", max_concurrency="1"))

    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
    llm.refresh_from_db()
    assert llm.max_concurrency == 4
    assert Engine.objects.count() == 1
    assert fake_openai.requests == []


def test_engines_area_is_in_the_nav_for_staff_only(admin_client, annotator_user):
    assert 'href="/engines/"' in admin_client.get("/dashboard/").content.decode()
    annotator = Client()
    annotator.force_login(annotator_user)
    response = annotator.get("/", follow=True)
    assert 'href="/engines/"' not in response.content.decode()


# --- REST API ---------------------------------------------------------------------------------


def test_api_lists_engines_without_keys(admin_client, llm):
    body = admin_client.get("/api/engines/").json()

    (row,) = body["results"]
    assert row["name"] == "llm"
    assert row["api_key_env"] == "HARDSET_ENGINE_KEY_PAGES"
    assert SECRET not in str(body)


def test_api_creates_and_validates(admin_client):
    bad = admin_client.post(
        "/api/engines/",
        {"name": "h", "kind": "heuristic", "capabilities": ["translate"], "params": {}},
        content_type="application/json",
    )
    assert bad.status_code == 400
    assert "capabilities" in bad.json()
    assert not Engine.objects.exists()

    good = admin_client.post(
        "/api/engines/",
        {"name": "h", "kind": "heuristic", "capabilities": ["difficulty"],
         "params": {"feature": "chars"}},
        content_type="application/json",
    )  # fmt: skip
    assert good.status_code == 201, good.json()
    assert Engine.objects.get(name="h").params == {"feature": "chars"}


def test_api_check_and_totals(admin_client, llm, fake_openai):
    fake_openai.push(Reply.translation("Hallo"))

    check = admin_client.post("/api/engines/llm/check/").json()
    totals = admin_client.get("/api/engines/llm/totals/").json()

    assert (check["ok"], check["operation"], check["output"]) == (True, "translate", "Hallo")
    assert totals["calls"] == 1


def test_api_is_staff_only(annotator_client, llm):
    assert annotator_client.get("/api/engines/").status_code == 403
    response = annotator_client.patch(
        "/api/engines/llm/", {"max_concurrency": 1}, content_type="application/json"
    )
    assert response.status_code == 403
    llm.refresh_from_db()
    assert llm.max_concurrency == 4
