"""Tests that need PostgreSQL: the suite runs on SQLite and on PostgreSQL (``make test``), and a
test of something only PostgreSQL has is skipped on SQLite with the reason it names."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection


def postgres_only(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(connection.vendor != "postgresql", reason=reason)


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
