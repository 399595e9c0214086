"""Fixtures of the engines tests; ``fake_openai`` is importable by other apps' conftest too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.engines.fake_openai import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A started :class:`FakeOpenAI` on 127.0.0.1 answering with ``auto_reply``."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(autouse=True)
def _fast_backoff(settings):
    """Retries in tests wait milliseconds, not seconds (the policy itself is unchanged)."""
    settings.ENGINE_BACKOFF_BASE_S = 0.01
    settings.ENGINE_BACKOFF_MAX_S = 0.05
