"""Settings parsing: bad values stop start-up with a message that names the variable."""

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from core.env import env_bool, env_int, env_list, env_str
from tests.conftest import REPO_ROOT


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1", True), ("true", True), ("YES", True), ("on", True), ("0", False), ("off", False)],
)
def test_env_bool_accepts_the_usual_spellings(raw, expected):
    assert env_bool("FLAG", not expected, {"FLAG": raw}) is expected


def test_env_bool_rejects_anything_else():
    with pytest.raises(ImproperlyConfigured, match=r"FLAG='ture' is not a boolean"):
        env_bool("FLAG", False, {"FLAG": "ture"})


def test_env_defaults_when_unset_or_empty():
    assert env_bool("FLAG", True, {}) is True
    assert env_int("N", 7, {"N": ""}) == 7
    assert env_str("S", "x", {}) == "x"
    assert env_list("L", ["a"], {}) == ["a"]


def test_env_int_rejects_text_and_values_below_minimum():
    with pytest.raises(ImproperlyConfigured, match=r"N='12a' is not an integer"):
        env_int("N", 1, {"N": "12a"})
    with pytest.raises(ImproperlyConfigured, match=r"N=0 must be at least 1"):
        env_int("N", 1, {"N": "0"}, minimum=1)


def test_env_list_splits_and_trims():
    assert env_list("HOSTS", [], {"HOSTS": " a.org, b.org ,,"}) == ["a.org", "b.org"]


def test_file_twin_is_read_and_conflicts_are_refused(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n")
    assert env_str("SECRET_KEY", "", {"SECRET_KEY_FILE": str(secret)}) == "s3cret"
    with pytest.raises(ImproperlyConfigured, match="either SECRET_KEY or SECRET_KEY_FILE"):
        env_str("SECRET_KEY", "", {"SECRET_KEY_FILE": str(secret), "SECRET_KEY": "x"})
    with pytest.raises(ImproperlyConfigured, match="cannot be read"):
        env_str("SECRET_KEY", "", {"SECRET_KEY_FILE": str(tmp_path / "missing")})


def start_django(
    code: str = "import django; django.setup()", **env: str
) -> subprocess.CompletedProcess:
    """Run ``code`` (by default, only Django's start-up) in a fresh process with ``env``."""
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY"}}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env=clean | env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_startup_fails_on_a_bad_boolean():
    result = start_django(DEBUG="maybe")
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


def test_startup_refuses_the_development_key_without_debug():
    result = start_django(DEBUG="false")
    assert result.returncode != 0
    assert "SECRET_KEY is the development key but DEBUG is off" in result.stderr


def test_startup_fails_on_a_bad_integer():
    result = start_django(DEBUG="true", CELERY_TASK_TIME_LIMIT="ten")
    assert result.returncode != 0
    assert "CELERY_TASK_TIME_LIMIT='ten' is not an integer" in result.stderr


def test_startup_fails_on_an_unusable_database_url():
    result = start_django(DEBUG="true", DATABASE_URL="nosuchdb://x")
    assert result.returncode != 0
    assert "DATABASE_URL is not a usable database URL" in result.stderr


def test_startup_succeeds_with_a_real_key_and_debug_off():
    result = start_django(DEBUG="false", SECRET_KEY="a" * 50, ALLOWED_HOSTS="hardset.example")
    assert result.returncode == 0, result.stderr
