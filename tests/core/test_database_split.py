"""The PostgreSQL pass runs what differs between the engines (tests/databases.py): every app
module that branches on the engine or writes SQL by hand is covered by tests in that pass."""

from __future__ import annotations

import re

from tests.conftest import REPO_ROOT
from tests.databases import ENGINE_SPECIFIC_SOURCES, POSTGRESQL_MODULES

APPS = ("accounts", "annotation", "challenge_sets", "config", "core", "difficulty", "engines",
        "formats", "imports", "lexical", "rounds", "search")  # fmt: skip
# Code whose behaviour is the engine's: a branch on the vendor, or SQL written by hand.
ENGINE_SPECIFIC = re.compile(r"connection\.vendor|\.vendor [!=]=|cursor\.execute|RawSQL|\.raw\(")


def _engine_specific_sources() -> set[str]:
    found = set()
    for app in APPS:
        for path in (REPO_ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            if ENGINE_SPECIFIC.search(path.read_text()):
                found.add(path.relative_to(REPO_ROOT).as_posix())
    return found


def test_every_engine_specific_module_names_its_tests_in_the_postgresql_pass():
    assert _engine_specific_sources() == set(ENGINE_SPECIFIC_SOURCES)
    for tests in ENGINE_SPECIFIC_SOURCES.values():
        assert set(tests) <= set(POSTGRESQL_MODULES)


def test_every_listed_test_module_exists():
    assert [path for path in POSTGRESQL_MODULES if not (REPO_ROOT / path).is_file()] == []
