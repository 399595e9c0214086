"""Fixtures of the lexical tests: the fake OpenAI server (scripted chat engines)."""

from tests.engines.conftest import fake_openai  # noqa: F401  (re-exported fixture)
