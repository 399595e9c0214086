"""Management commands turn bad input into a one-line error and an exit status, never a
traceback, and write nothing (core/command_io.py); a byte-order mark is accepted everywhere."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign
from difficulty.models import DifficultyDataset
from engines.models import Engine
from search.models import BreakerRun, SearchRun
from tests import conftest
from tests.annotation.factories import CampaignFactory
from tests.conftest import REPO_ROOT
from tests.engines.factories import EngineFactory, SyntheticEngineFactory
from tests.search.breaker_helpers import offline_config
from tests.search.conftest import synthetic_run_config

NOT_UTF8 = b"\xff\xfe{}"
BOM = b"\xef\xbb\xbf"


def manage(*args: str) -> subprocess.CompletedProcess:
    env = os.environ | {"DEBUG": "true", "DATABASE_URL": conftest.test_database_url()}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def error_lines(result: subprocess.CompletedProcess) -> list[str]:
    """stderr less the log lines apps write while starting (django-axes announces itself)."""
    return [line for line in result.stderr.splitlines() if " INFO " not in line]


def one_line_error(*args: str) -> str:
    """The message of the CommandError the command raises, which must be one line."""
    with pytest.raises(CommandError) as info:
        call_command(*args, stdout=io.StringIO())
    message = str(info.value)
    assert "\n" not in message, message
    return message


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("command", "model"),
    [("import_engines", Engine), ("run_search", SearchRun), ("run_breaker", BreakerRun)],
)
def test_a_file_that_is_not_utf8_is_one_line_on_stderr(tmp_path, command, model):
    path = tmp_path / "latin1.json"
    path.write_bytes(NOT_UTF8)

    result = manage(command, str(path))

    assert result.returncode == 1
    assert error_lines(result) == [f"CommandError: {path}: not valid UTF-8"]
    assert not model.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_output_folder_that_does_not_exist_is_one_line_on_stderr(tmp_path):
    EngineFactory(name="llm")
    target = tmp_path / "missing" / "engines.json"

    result = manage("export_engines", "--output", str(target))

    assert result.returncode == 1
    assert error_lines(result) == [
        f"CommandError: cannot write {target}: No such file or directory"
    ]
    assert not target.parent.exists()


@pytest.mark.django_db
def test_campaign_export_refuses_a_bad_destination_and_chunk_size(tmp_path):
    campaign = CampaignFactory(name="Exported")
    target = tmp_path / "missing" / "out.jsonl"

    assert one_line_error("export_campaign", campaign.name, "--output", str(target)) == (
        f"cannot write {target}: No such file or directory"
    )
    message = one_line_error(
        "export_campaign", campaign.name, "--output", str(tmp_path / "x.jsonl"), "--chunk-size", "0"
    )
    assert message == "--chunk-size must be at least 1 (got 0)"
    assert list(tmp_path.iterdir()) == []
    assert one_line_error("export_campaign", "Nope", "--output", "-") == "no campaign named 'Nope'"


@pytest.mark.django_db
def test_broken_json_names_line_and_column(tmp_path):
    path = tmp_path / "run.json"
    path.write_text('{\n  "name": "x",\n  "seed": }\n', encoding="utf-8")

    message = one_line_error("run_breaker", str(path))

    assert message == f"{path}: not valid JSON (Expecting value at line 3, column 11)"
    assert not BreakerRun.objects.exists()


@pytest.mark.django_db
def test_a_validation_error_names_its_field_on_one_line(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text('{"doc_id": "d", "seg_id": 1, "source": "a", "target": "b"}\n')

    message = one_line_error(
        "import_campaign", str(items), "--name", "C", "--protocol", "esa", "--overlap", "0"
    )

    assert message == "nothing imported: overlap: Ensure this value is greater than or equal to 1."
    assert not Campaign.objects.exists()


@pytest.mark.django_db
def test_one_bad_line_or_entry_is_reported_on_one_line(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_bytes(NOT_UTF8 + b"\n")
    assert one_line_error("import_campaign", str(items), "--name", "C", "--protocol", "esa") == (
        f"nothing imported: {items}:1: not valid UTF-8"
    )
    assert one_line_error("import_difficulty_dataset", str(items), "--name", "D") == (
        f"{items} was not imported; nothing was written: line 1: not valid UTF-8"
    )
    engines = tmp_path / "engines.json"
    engines.write_text("[3, 4]")
    with pytest.raises(CommandError) as info:  # two problems: listed under the summary
        call_command("import_engines", str(engines))
    assert str(info.value).splitlines()[0] == "nothing imported: 2 problems:"
    assert not (Campaign.objects.exists() or DifficultyDataset.objects.exists())
    assert not Engine.objects.exists()


@pytest.mark.django_db
def test_a_byte_order_mark_is_accepted_by_every_json_reading_command(tmp_path, sent_tasks):
    """Editors on Windows write one; the JSONL importers already skipped it (formats.jsonl)."""
    engines = tmp_path / "engines.json"
    engines.write_bytes(
        BOM + json.dumps([{"name": "llm", "kind": "openai_chat", "model": "m",
                           "base_url": "http://127.0.0.1:9/v1",
                           "capabilities": ["translate"]}]).encode()
    )  # fmt: skip
    call_command("import_engines", str(engines), stdout=io.StringIO())
    assert list(Engine.objects.values_list("name", flat=True)) == ["llm"]

    SyntheticEngineFactory(name="world", params={"n_topics": 200, "seed": 1})
    search = tmp_path / "search.json"
    search.write_bytes(BOM + json.dumps(synthetic_run_config()).encode())
    call_command("run_search", str(search), stdout=io.StringIO())
    breaker = tmp_path / "breaker.json"
    breaker.write_bytes(BOM + json.dumps(offline_config(n_steps=2)).encode())
    call_command("run_breaker", str(breaker), stdout=io.StringIO())
    assert SearchRun.objects.count() == 1 and BreakerRun.objects.count() == 1
