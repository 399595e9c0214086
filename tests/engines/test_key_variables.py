"""Which environment variables an engine may name as its API key, and masking keys in errors."""

from __future__ import annotations

import json
import logging

import pytest

from engines.interfaces import EngineError
from engines.models import Engine, EngineCall
from engines.registry import resolve
from engines.services import EngineImportError, import_engines
from tests.engines.factories import EngineFactory
from tests.engines.fake_openai import Reply

pytestmark = pytest.mark.django_db

KEY = "sk-live-0123456789abcdef"


def _form(**overrides):
    data = {
        "name": "gpt", "kind": "openai_chat", "capabilities": ["chat", "translate"],
        "description": "", "model": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "HARDSET_ENGINE_KEY_GPT", "params": "{}", "price_in_per_1k": "0",
        "price_out_per_1k": "0", "max_concurrency": "2", "timeout_s": "30", "max_retries": "0",
        "enabled": "on",
    }  # fmt: skip
    data.update(overrides)
    return data


@pytest.mark.parametrize(
    "name", ["SECRET_KEY", "DATABASE_URL", "EMAIL_HOST_PASSWORD", "PATH", "SECRET_KEY_FILE"]
)
def test_the_engine_form_refuses_a_server_variable(admin_client, name):
    response = admin_client.post("/engines/new/", _form(api_key_env=name))

    assert response.status_code == 200
    assert "is not allowed as an engine key" in response.content.decode()
    assert not Engine.objects.exists()


def test_server_secrets_are_refused_even_when_an_operator_lists_them(admin_client, settings):
    settings.ENGINE_KEY_VARIABLES = ["SECRET_KEY", "DATABASE_*", "HARDSET_ENGINE_KEY_*"]

    for name in ("SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL_FILE"):
        response = admin_client.post("/engines/new/", _form(api_key_env=name))
        assert "is not allowed as an engine key" in response.content.decode()
    assert not Engine.objects.exists()
    response = admin_client.post("/engines/new/", _form(api_key_env="HARDSET_ENGINE_KEY_GPT"))
    assert response.status_code == 302


def test_an_operator_allows_variables_by_name_and_prefix(admin_client, settings):
    settings.ENGINE_KEY_VARIABLES = ["MY_LAB_*", "VLLM_TOKEN"]

    assert admin_client.post("/engines/new/", _form(api_key_env="MY_LAB_GPT")).status_code == 302
    assert (
        admin_client.post("/engines/new/", _form(name="v", api_key_env="VLLM_TOKEN")).status_code
        == 302
    )
    refused = admin_client.post("/engines/new/", _form(name="o", api_key_env="OPENAI_API_KEY"))
    assert "is not allowed as an engine key" in refused.content.decode()


def test_the_api_refuses_a_server_variable_with_a_field_error(admin_client):
    body = json.loads(_api_body(api_key_env="SECRET_KEY"))

    response = admin_client.post("/api/engines/", body, content_type="application/json")

    assert response.status_code == 400
    assert "api_key_env" in response.json()
    assert "not allowed as an engine key" in response.json()["api_key_env"][0]
    assert not Engine.objects.exists()


def _api_body(**overrides):
    data = {
        "name": "gpt", "kind": "openai_chat", "capabilities": ["translate"], "model": "m",
        "base_url": "http://127.0.0.1:9/v1", "api_key_env": "HARDSET_ENGINE_KEY_GPT",
    }  # fmt: skip
    data.update(overrides)
    return json.dumps(data)


def test_import_engines_refuses_a_server_variable_and_writes_nothing():
    entry = json.loads(_api_body(api_key_env="EMAIL_HOST_PASSWORD"))

    with pytest.raises(EngineImportError) as info:
        import_engines([entry])

    assert "api_key_env" in info.value.problems[0]
    assert "not allowed as an engine key" in info.value.problems[0]
    assert not Engine.objects.exists()


def test_a_call_never_sends_a_variable_saved_before_the_rule(fake_openai, monkeypatch):
    # An engine row written before the allow-list existed (or straight into the database).
    engine = EngineFactory(name="old", base_url=fake_openai.base_url)
    Engine.objects.filter(pk=engine.pk).update(api_key_env="SECRET_KEY")
    engine.refresh_from_db()

    with pytest.raises(EngineError) as info:
        resolve(engine, "translate").translate(["one"], "en", "de")

    assert info.value.permanent
    assert "SECRET_KEY" in info.value.message and "not allowed" in info.value.message
    assert fake_openai.requests == []


def test_a_provider_error_that_echoes_the_key_is_masked_everywhere(
    admin_client, fake_openai, monkeypatch, caplog
):
    monkeypatch.setenv("HARDSET_ENGINE_KEY_GPT", KEY)
    EngineFactory(
        name="llm", base_url=fake_openai.base_url, api_key_env="HARDSET_ENGINE_KEY_GPT",
        max_retries=0,
    )  # fmt: skip
    echo = json.dumps(
        {"error": {"message": f"Incorrect API key provided: {KEY}. Header was Bearer {KEY}"}}
    ).encode()
    fake_openai.push(Reply(status=401, raw=echo))

    with caplog.at_level(logging.WARNING):
        response = admin_client.post("/api/engines/llm/check/")

    assert response.status_code == 200
    error = response.json()["error"]
    assert "Incorrect API key provided" in error
    assert KEY not in error and KEY[:12] not in error
    stored = EngineCall.objects.get().error
    assert "Incorrect API key provided" in stored and KEY not in stored
    assert KEY not in caplog.text
    assert "Bearer ***" in stored
