"""Tests that need PostgreSQL: the suite runs on SQLite and on PostgreSQL (``make test``), and a
test of something only PostgreSQL has is skipped on SQLite with the reason it names."""

from __future__ import annotations

import pytest
from django.db import connection


def postgres_only(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(connection.vendor != "postgresql", reason=reason)
