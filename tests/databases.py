"""Which tests run on which database.

``make test`` runs the whole suite once, on SQLite (the embedded default), and then, on
PostgreSQL, only the tests of what differs between the two engines: the tests marked
``postgresql``. A test gets the marker when its module is listed below, when it is
``postgres_only``, or when it starts a real Celery worker (claims, leases and locks across
processes). ``tests/core/test_database_split.py`` checks the list against the code: every
app module whose code branches on the engine or writes SQL by hand names the listed tests that
cover it.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection

# Test modules that run on both engines, with what they hold that differs between them.
POSTGRESQL_MODULES: dict[str, str] = {
    "tests/accounts/test_sessions_and_users.py": "hand-written session and user statements",
    "tests/annotation/test_claim_slots.py": "claims: skip_locked, F() counters",
    "tests/annotation/test_concurrency.py": "many annotators at once, row locks",
    "tests/ranking/test_adaptive_concurrency.py": "adaptive picks under row locks, goal checks",
    "tests/annotation/test_hot_sql_plans.py": "the hot path's hand-written SQL and its plans",
    "tests/annotation/test_submit_sql.py": "the hand-written submission statements",
    "tests/annotation/test_claim_migration.py": "a data migration",
    "tests/annotation/test_index_migration.py": "a migration that builds indexes",
    "tests/difficulty/test_migration.py": "a migration that moves tables between apps",
    "tests/difficulty/test_difficulty_evaluation.py": "evaluations that wait out a lost database",
    "tests/engines/test_limiter.py": "the engine limiter's advisory locks",
    "tests/imports/test_import_jobs.py": "imports that wait out a lost database",
    "tests/core/test_health.py": "the health check's query",
    "tests/core/test_postgresql_backend.py": "the PostgreSQL backend of core/postgresql",
    "tests/core/test_production.py": "gunicorn with the production settings",
    "tests/rounds/test_kernel.py": "claims by conditional UPDATE",
    "tests/rounds/test_leases.py": "lease takeover",
    "tests/rounds/test_outage.py": "telling a lost database from a failed query",
    "tests/rounds/test_round_task.py": "the round body's lost-database rung",
    "tests/search/test_run_state.py": "pulls written with executemany",
    "tests/search/test_breaker_runs.py": "chains written with executemany",
    "tests/search/test_topics_generation.py": "tree generation that waits out a lost database",
}

# App modules whose code differs between the engines, and the listed tests that cover them.
ENGINE_SPECIFIC_SOURCES: dict[str, tuple[str, ...]] = {
    "annotation/hot_sql.py": (
        "tests/annotation/test_hot_sql_plans.py",
        "tests/annotation/test_submit_sql.py",
        "tests/annotation/test_claim_slots.py",
    ),
    "core/rows.py": (
        "tests/accounts/test_sessions_and_users.py",
        "tests/annotation/test_hot_sql_plans.py",
    ),
    "core/health.py": ("tests/core/test_health.py",),
    "engines/limiter.py": ("tests/engines/test_limiter.py",),
    "rounds/outage.py": ("tests/rounds/test_outage.py", "tests/rounds/test_round_task.py"),
    "search/breaker/services.py": ("tests/search/test_breaker_runs.py",),
    "search/runs/services.py": ("tests/search/test_run_state.py",),
}

MARKER = "postgresql"


def postgres_only(reason: str) -> pytest.MarkDecorator:
    """Skipped on SQLite with ``reason``; run in the PostgreSQL pass (the extra keyword marks it:
    pytest reads only the condition and the reason of a ``skipif``)."""
    return pytest.mark.skipif(
        connection.vendor != "postgresql", reason=reason, postgresql_only=True
    )


def runs_on_postgresql(item: pytest.Item, module_path: str) -> bool:
    return (
        module_path in POSTGRESQL_MODULES
        or item.get_closest_marker("celery_worker") is not None
        or any(mark.kwargs.get("postgresql_only") for mark in item.iter_markers("skipif"))
    )


# With no CACHE_URL the throttles' cache is a database table (config/settings.py), so every API
# request reads its count there (one SELECT) and writes it back (COUNT, SAVEPOINT, SELECT,
# INSERT or UPDATE, RELEASE): a query count of an API request allows for these.
API_THROTTLE_QUERIES = 6


def app_statements(captured) -> list[str]:
    """The statements a request sent, less the throttle cache's and the savepoints the test's
    own transaction turns ``atomic`` into."""
    table = settings.CACHES["default"].get("LOCATION", "")
    return [
        q["sql"]
        for q in captured
        if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))
        and not (table and f'"{table}"' in q["sql"])
    ]
