"""check_engine, import_engines, export_engines and the offline demo, through call_command."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from engines import demo
from engines.models import Engine
from engines.registry import resolve
from tests.engines.factories import EngineFactory
from tests.engines.fake_openai import Reply

pytestmark = pytest.mark.django_db


def _run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_check_engine_succeeds_with_output_and_latency(fake_openai):
    EngineFactory(name="llm", base_url=fake_openai.base_url)
    fake_openai.push(Reply.translation("Ahoj"))

    out = _run("check_engine", "llm", "--tgt", "cs", "--text", "Hello")

    assert "translate: en→cs: Hello" in out
    assert "Ahoj" in out
    assert "llm: ok in" in out
    assert "Czech" in fake_openai.requests[0].prompt


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply.error(401, "bad key"), "permanent error"),
        (Reply("no markers at all"), "no <START OF TRANSLATION> marker"),
    ],
)
def test_check_engine_fails_when_the_call_or_parse_fails(fake_openai, reply, message):
    EngineFactory(name="llm", base_url=fake_openai.base_url, params={"max_parse_attempts": 1})
    fake_openai.push(reply)

    with pytest.raises(CommandError, match=message):
        _run("check_engine", "llm")


def test_check_engine_exit_status_in_a_real_process(fake_openai, transactional_db):
    from tests.conftest import test_database_url

    EngineFactory(name="llm", base_url=fake_openai.base_url)
    env = {"DATABASE_URL": test_database_url(), "DEBUG": "true", "PATH": "/usr/bin:/bin"}
    ok = subprocess.run(
        [sys.executable, "manage.py", "check_engine", "llm"], env=env, capture_output=True
    )
    fake_openai.push(Reply.error(404, "no such model"))
    bad = subprocess.run(
        [sys.executable, "manage.py", "check_engine", "llm"], env=env, capture_output=True
    )
    missing = subprocess.run(
        [sys.executable, "manage.py", "check_engine", "ghost"], env=env, capture_output=True
    )

    assert ok.returncode == 0, ok.stderr
    assert bad.returncode == 1
    assert b"HTTP 404" in bad.stderr
    assert missing.returncode == 1
    assert b"no engine named 'ghost'" in missing.stderr


GOOD = [
    {"name": "judge", "kind": "openai_chat", "capabilities": ["quality"], "model": "m",
     "base_url": "http://127.0.0.1:9/v1", "api_key_env": "HARDSET_ENGINE_KEY_JUDGE",
     "price_in_per_1k": "0.25", "params": {"temperature": 0}},
    {"name": "crowd", "kind": "artificial_crowd", "capabilities": ["difficulty"],
     "params": {"translators": ["judge"], "quality_estimators": ["judge"]}},
]  # fmt: skip


def _write(tmp_path, data) -> str:
    path = tmp_path / "engines.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_import_creates_then_updates_by_name(tmp_path):
    GOOD_FIXED = [dict(GOOD[0], capabilities=["translate", "quality"]), GOOD[1]]
    out = _run("import_engines", _write(tmp_path, GOOD_FIXED))
    assert "2 created, 0 updated" in out
    judge = Engine.objects.get(name="judge")
    assert (judge.price_in_per_1k, judge.api_key_env) == (
        Decimal("0.25"),
        "HARDSET_ENGINE_KEY_JUDGE",
    )

    changed = [dict(GOOD_FIXED[0], max_concurrency=16), GOOD_FIXED[1]]
    assert "0 created, 2 updated" in _run("import_engines", _write(tmp_path, changed))
    assert Engine.objects.get(name="judge").max_concurrency == 16


@pytest.mark.parametrize(
    ("data", "message"),
    [
        # The crowd names "judge" as a translator, but judge cannot translate.
        (GOOD, "crowd: params: judge: that engine is not configured as a translator"),
        ([dict(GOOD[0], api_key="sk-123")], "keys are never imported"),
        ([dict(GOOD[0], colour="red")], "unknown field(s) colour"),
        ([GOOD[0], GOOD[0]], "appears twice"),
        ([dict(GOOD[0], params={"temperature": 9})], "temperature must be a number"),
        ({"name": "x"}, "JSON list"),
    ],
)
def test_import_is_atomic_and_explains(tmp_path, data, message):
    EngineFactory(name="judge", max_concurrency=3)

    with pytest.raises(CommandError) as info:
        _run("import_engines", _write(tmp_path, data))

    assert message in str(info.value)
    assert "nothing imported" in str(info.value) or "JSON list" in str(info.value)
    assert list(Engine.objects.values_list("name", "max_concurrency")) == [("judge", 3)]


def test_import_rejects_broken_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("[{")
    with pytest.raises(CommandError, match="not valid JSON"):
        _run("import_engines", str(path))


def test_export_round_trips_and_holds_no_key(tmp_path, monkeypatch):
    monkeypatch.setenv("HARDSET_ENGINE_KEY_JUDGE", "sk-secret-value")
    fixed = [dict(GOOD[0], capabilities=["translate", "quality"]), GOOD[1]]
    _run("import_engines", _write(tmp_path, fixed))

    exported = _run("export_engines")

    assert "sk-secret-value" not in exported
    data = json.loads(exported)
    assert [row["name"] for row in data] == ["crowd", "judge"]
    assert data[1]["api_key_env"] == "HARDSET_ENGINE_KEY_JUDGE"
    Engine.objects.all().delete()
    _run("import_engines", _write(tmp_path, data))
    assert json.loads(_run("export_engines")) == data


def test_demo_engines_work_offline_and_loading_twice_changes_nothing():
    out = io.StringIO()
    demo.load_demo(out)
    first = json.loads(_run("export_engines"))
    demo.load_demo(io.StringIO())

    assert json.loads(_run("export_engines")) == first
    names = {row["name"] for row in first}
    assert {"length", "chars", "rarity", "synthetic-3k"} <= names
    assert resolve("length", "difficulty").estimate(["One two three."], "en") == [-3.0]
    assert len(resolve("synthetic-3k", "difficulty").estimate(["synthetic:0:0"])) == 1
    if demo.WMT24_PATH.is_file():
        replay = Engine.objects.get(name=demo.REPLAY_NAME)
        items = [json.loads(line) for line in demo.WMT24_PATH.open(encoding="utf-8")]
        # Repeated source segments share one row per system (the key is the source text).
        keys = {(item["src"], system) for item in items for system in item["tgt"]}
        assert replay.replay_entries.count() == len(keys) > 4000
        source = replay.replay_entries.first().source
        assert resolve(replay, "translate").translate([source], "en", "cs")[0]
        (quality,) = resolve(replay, "difficulty").estimate([source], "en", "cs")
        assert 0 <= quality <= 100
