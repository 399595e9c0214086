"""The registry of item sources (see ``base.py``); built-ins are the ``register`` lines below.

A new source joins with one module and one line here.
"""

from __future__ import annotations

from challenge_sets.sources.base import Candidate, Field, ItemSource, SourceError

__all__ = ["Candidate", "Field", "ItemSource", "SourceError", "all_sources", "get", "register"]

_REGISTRY: dict[str, ItemSource] = {}


def register(source: ItemSource) -> ItemSource:
    _REGISTRY[source.name] = source
    return source


def get(name: str) -> ItemSource:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise SourceError(f"unknown item source {name!r}; known: {', '.join(_REGISTRY)}") from None


def all_sources() -> list[ItemSource]:
    return list(_REGISTRY.values())


def _register_builtins() -> None:
    from challenge_sets.sources.breaker_run import BreakerRunSource
    from challenge_sets.sources.difficulty_dataset import DifficultyDatasetSource
    from challenge_sets.sources.jsonl import JsonlSource
    from challenge_sets.sources.lexical_study import LexicalStudySource
    from challenge_sets.sources.search_run import SearchRunSource

    register(SearchRunSource())
    register(DifficultyDatasetSource())
    register(JsonlSource())
    register(BreakerRunSource())
    register(LexicalStudySource())


_register_builtins()
