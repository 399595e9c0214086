"""``make run HOST=… PORT=…`` reaches ``run_platform``, which refuses a bad address before it
starts anything."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from core.management.commands import run_platform
from core.management.commands.run_platform import server_address

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_takes_host_and_port():
    def planned(*variables: str) -> str:
        made = subprocess.run(
            ["make", "-n", "run", *variables], cwd=REPO_ROOT, capture_output=True, text=True,
            check=True,
        )  # fmt: skip
        return next(line for line in made.stdout.splitlines() if "run_platform" in line)

    assert planned().endswith("manage.py run_platform --host '127.0.0.1' --port '8000'")
    assert planned("HOST=0.0.0.0", "PORT=9001").endswith("--host '0.0.0.0' --port '9001'")


@pytest.mark.parametrize(
    ("host", "port", "address"),
    [("127.0.0.1", "8000", "127.0.0.1:8000"), ("0.0.0.0", 9001, "0.0.0.0:9001"),
     ("::", "8080", "[::]:8080"), ("[::1]", "80", "[::1]:80"),
     ("localhost", " 81 ", "localhost:81")],
)  # fmt: skip
def test_the_address_runserver_takes(host, port, address):
    assert server_address(host, port) == address


@pytest.mark.parametrize(
    ("options", "message"),
    [(["--port", "0"], "port must be a number from 1 to 65535, got '0'"),
     (["--port", "http"], "port must be a number from 1 to 65535, got 'http'"),
     (["--port", "70000"], "port must be a number from 1 to 65535, got '70000'"),
     (["--host", "a b"], "host must be a host name or an IP address, got 'a b'"),
     (["--host", ""], "host must be a host name or an IP address, got ''")],
)  # fmt: skip
def test_a_bad_address_is_refused_before_anything_starts(monkeypatch, options, message):
    def no_process(*args, **kwargs):
        raise AssertionError("nothing may start")

    monkeypatch.setattr(run_platform.subprocess, "Popen", no_process)
    with pytest.raises(CommandError) as error:
        call_command("run_platform", *options)
    assert str(error.value) == message
