"""Fixtures of the fault tests: private PostgreSQL and Redis servers (see ``servers.py``).

The outer tests (``test_restarts.py``) start the servers and run each scenario
(``scenarios.py``) in a pytest process of its own whose DATABASE_URL and broker are the private
servers, whatever database the suite itself runs on; the scenario restarts them mid-run.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engines.conftest import fake_openai  # noqa: F401  (re-exported for the scenarios)
from tests.faults.servers import PrivatePostgres, PrivateRedis

POSTGRES_ENV = "FAULTS_POSTGRES"
REDIS_ENV = "FAULTS_REDIS"


@pytest.fixture(scope="module")
def private_servers() -> Iterator[tuple[PrivatePostgres, PrivateRedis]]:
    # Not pytest's tmp_path: its parents are private to root, and the cluster runs as postgres.
    folder = Path(tempfile.mkdtemp(prefix="hardset-faults-"))
    folder.chmod(0o755)  # the postgres account must reach its cluster folder inside
    # Undone in reverse order, each step even when an earlier one failed.
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, folder, ignore_errors=True)
        postgres = PrivatePostgres.create(folder / "postgres")
        postgres.start()
        cleanup.callback(postgres.stop)
        redis = PrivateRedis.create(folder / "redis")
        redis_process = redis.start()
        cleanup.callback(redis_process.wait, 30)
        cleanup.callback(redis.stop)  # whichever server holds the port after the scenarios
        yield postgres, redis


def _from_env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is unset: scenarios run through tests/faults/test_restarts.py")
    return value


@pytest.fixture
def private_postgres() -> PrivatePostgres:
    """The cluster this scenario's DATABASE_URL points at."""
    return PrivatePostgres.from_env(_from_env(POSTGRES_ENV))


@pytest.fixture
def private_redis() -> PrivateRedis:
    """The redis-server this scenario's CELERY_BROKER_URL points at."""
    return PrivateRedis.from_env(_from_env(REDIS_ENV))
