"""Throttles count in a cache every web process shares (issue 40): a limit holds across
processes, as it must under gunicorn's several workers."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import uuid

import pytest
import redis
from django.test import Client

from annotation.signup_limits import record_signup_attempt
from tests import conftest
from tests.factories import UserFactory

# One fixed hour, so the window cannot turn between the processes' attempts.
NOW = 1_800_000_000.0
ATTEMPTS = (
    "from annotation.signup_limits import record_signup_attempt as attempt; "
    f"print(sum(attempt('10.9.9.9', 7, now={NOW}) for _ in range(10)))"
)


def _start(extra_env: dict[str, str]) -> subprocess.Popen:
    env = os.environ | {"DEBUG": "true", "SIGNUP_ATTEMPTS_PER_HOUR": "10"} | extra_env
    return subprocess.Popen(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", ATTEMPTS],
        cwd=conftest.REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _granted(process: subprocess.Popen) -> int:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return int(out.strip())


@pytest.mark.django_db(transaction=True)
def test_the_database_cache_shares_the_signup_limit_with_another_process(settings):
    settings.SIGNUP_ATTEMPTS_PER_HOUR = 10
    env = {"DATABASE_URL": conftest.test_database_url(), "CACHE_URL": ""}
    assert [record_signup_attempt("10.9.9.9", 7, now=NOW) for _ in range(6)] == [True] * 6

    granted = _granted(_start(env))

    assert granted == 4
    assert record_signup_attempt("10.9.9.9", 7, now=NOW) is False


@pytest.mark.django_db(transaction=True)
def test_the_api_rate_of_a_user_holds_across_processes(settings):
    settings.API_THROTTLE_USER = "5/minute"
    UserFactory(username="carol")  # password: "correct horse battery"
    basic = base64.b64encode(b"carol:correct horse battery").decode()
    client = Client(HTTP_AUTHORIZATION=f"Basic {basic}")
    assert [client.get("/api/campaigns/").status_code for _ in range(3)] == [200] * 3

    requests = (
        "from django.test import Client; "
        f"client = Client(HTTP_HOST='localhost', HTTP_AUTHORIZATION='Basic {basic}'); "
        "print(' '.join(str(client.get('/api/campaigns/').status_code) for _ in range(4)))"
    )
    env = os.environ | {
        "DEBUG": "true", "API_BASIC_AUTH": "true", "API_THROTTLE_USER": "5/minute",
        "DATABASE_URL": conftest.test_database_url(), "CACHE_URL": "",
    }  # fmt: skip
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", requests],
        cwd=conftest.REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["200", "200", "429", "429"]


def test_redis_shares_the_signup_limit_between_two_processes():
    url = os.environ.get("REDIS_TEST_URL", "redis://127.0.0.1:6379/15")
    prefix = f"hardset-test-{uuid.uuid4().hex[:8]}"
    env = {"CACHE_URL": url, "CACHE_KEY_PREFIX": prefix}
    try:
        first, second = _start(env), _start(env)  # at the same time

        assert _granted(first) + _granted(second) == 10
    finally:
        client = redis.Redis.from_url(url)
        for key in client.scan_iter(f"{prefix}:*"):
            client.delete(key)


def test_a_cache_url_that_is_not_redis_stops_start_up():
    env = os.environ | {"DEBUG": "true", "CACHE_URL": "memcached://127.0.0.1:11211"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=conftest.REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert result.returncode == 1
    assert "CACHE_URL='memcached://127.0.0.1:11211' is not a Redis URL" in result.stderr


@pytest.mark.django_db
def test_many_addresses_do_not_reset_one_addresss_count_on_the_database_cache(settings):
    # Django's database cache deletes a third of its rows (the lowest keys) past MAX_ENTRIES.
    settings.SIGNUP_ATTEMPTS_PER_HOUR = 2
    assert [record_signup_attempt("10.0.0.0", 7, now=NOW) for _ in range(2)] == [True, True]

    for n in range(400):
        record_signup_attempt(f"10.1.{n // 256}.{n % 256}", 7, now=NOW)

    assert record_signup_attempt("10.0.0.0", 7, now=NOW) is False
