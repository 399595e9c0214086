"""PostgreSQL and the Redis broker restarted in the middle of runs, on private servers.

Each scenario of ``scenarios.py`` runs in a pytest process of its own pointed at a PostgreSQL
cluster and a redis-server that this module starts in a temporary folder on free ports, so a
scenario may stop and start them at will, whichever database the suite itself runs on.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT
from tests.faults.conftest import POSTGRES_ENV, REDIS_ENV
from tests.faults.kinds import KIND_NAMES

pytestmark = [pytest.mark.celery_worker, pytest.mark.faults]

# PostgreSQL restarted mid-round, for every kind of job (tests/faults/kinds.py); Redis restarted
# mid search run.
SCENARIOS = [
    *(f"test_postgres_restarted_mid_round[{name}]" for name in KIND_NAMES),
    "test_redis_restarted_mid_search_run",
]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario_on_private_servers(scenario, private_servers):
    postgres, redis = private_servers
    env = os.environ | {
        "DATABASE_URL": postgres.url("hardset_faults"),
        "CELERY_BROKER_URL": redis.url,
        POSTGRES_ENV: postgres.to_env(),
        REDIS_ENV: redis.to_env(),
    }
    # --reuse-db: the first scenario creates the test database on the cluster, the others use it.
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--reuse-db",
        f"tests/faults/scenarios.py::{scenario}",
    ]  # fmt: skip
    result = subprocess.run(
        command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stdout[-12000:] + result.stderr[-4000:]
    assert "1 passed" in result.stdout, result.stdout[-4000:]
