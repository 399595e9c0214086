"""Build engine objects that implement the interfaces, by engine name or record.

This is the public entry point for other apps::

    from engines.registry import translator_for, difficulty_estimator_for

    translator = translator_for("gpt-4o-mini", scope=f"search_run:{run.pk}")
    outputs = translator.translate(texts, "en", "cs")

``scope`` is a free label written on every ledger row (``"search_run:12"``,
``"dataset_eval:3"``) so costs can be summed per run with ``engines.selectors.cost_by_scope``
without engines knowing other apps. ``use_cache=False`` bypasses the response cache (the
benchmark and the admin "Test" button use it).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import import_module
from typing import Any

from engines.adapters import (
    ArtificialCrowdEngine,
    OpenAIChatEngine,
    ReplayEngine,
    SyntheticEngine,
)
from engines.callpath import CallPath
from engines.interfaces import (
    DifficultyEstimator,
    Embedder,
    EngineError,
    QualityEstimator,
    Translator,
)
from engines.kinds import world_from_params
from engines.models import Engine
from engines.synthetic_world import SyntheticWorld

__all__ = [
    "adapter_for",
    "chat_model_for",
    "difficulty_estimator_for",
    "embedder_for",
    "get_engine",
    "quality_estimator_for",
    "scores_on_0_100",
    "synthetic_world_for",
    "translator_for",
]

# Kind → adapter class, by dotted path (as healthchecks names its transports), so a new kind is
# one class plus one line here.
ADAPTERS = {
    "openai_chat": "engines.adapters.OpenAIChatEngine",
    "heuristic": "engines.adapters.HeuristicEngine",
    "replay": "engines.adapters.ReplayEngine",
    "synthetic": "engines.adapters.SyntheticEngine",
    "artificial_crowd": "engines.adapters.ArtificialCrowdEngine",
    "breaker_editor": "engines.breaker_adapters.BreakerEditorEngine",
    "fragile_mt": "engines.breaker_adapters.FragileTranslatorEngine",
    "fragile_qe": "engines.breaker_adapters.FragileQEEngine",
    "openai_embeddings": "engines.embedding_adapters.OpenAIEmbeddingsEngine",
    "hashed_embeddings": "engines.embedding_adapters.HashedEmbeddingsEngine",
    "lexical_world": "engines.lexical_adapters.LexicalWorldEngine",
    "local_translator": "engines.local_models.adapters.LocalTranslatorEngine",
    "local_qe": "engines.local_models.adapters.LocalQEEngine",
    "local_difficulty": "engines.local_models.adapters.LocalDifficultyEngine",
    "local_embeddings": "engines.local_models.adapters.LocalEmbeddingsEngine",
}

_ROLE_OF = {
    "chat": "a chat model",
    "translate": "a translator",
    "quality": "a quality estimator",
    "difficulty": "a difficulty estimator",
    "embed": "an embeddings model",
}


def get_engine(engine: Engine | str) -> Engine:
    """The engine record for a record or a name; a permanent EngineError if there is none."""
    if isinstance(engine, Engine):
        return engine
    try:
        return Engine.objects.get(name=engine)
    except Engine.DoesNotExist:
        raise EngineError(f"there is no engine named {engine!r}", permanent=True) from None


def _class(kind: str) -> type:
    module, _, name = ADAPTERS[kind].rpartition(".")
    return getattr(import_module(module), name)


def scores_on_0_100(engine: Engine | str) -> bool:
    """Whether the engine's scores are on the 0–100 scale; heuristics' only rank texts. Read
    from the adapter class, so a disabled engine still answers."""
    return bool(getattr(_class(get_engine(engine).kind), "on_0_100_scale", True))


@lru_cache(maxsize=16)
def _world(params_json: str) -> SyntheticWorld:
    return world_from_params(json.loads(params_json))


def synthetic_world_for(engine: Engine | str) -> SyntheticWorld:
    """The :class:`SyntheticWorld` of a synthetic engine, for oracles and benchmarks.

    Cached per parameter set, so its topic means are drawn once per process.
    """
    record = get_engine(engine)
    if record.kind != Engine.Kind.SYNTHETIC:
        raise EngineError(f"engine {record.name} is not synthetic", permanent=True)
    return _world(json.dumps(record.params, sort_keys=True))


def adapter_for(
    engine: Engine | str, capability: str, scope: str = "", *, use_cache: bool = True
) -> Any:
    """The adapter of ``engine`` checked for ``capability`` (one of chat, translate, quality,
    difficulty, embed)."""
    record = get_engine(engine)
    if not record.enabled:
        raise EngineError(f"engine {record.name} is disabled", permanent=True)
    if not record.has_capability(capability):
        raise EngineError(
            f"engine {record.name} is not configured as {_ROLE_OF[capability]} "
            f"(capabilities: {', '.join(record.capabilities) or 'none'})",
            permanent=True,
        )
    path = CallPath(record, scope=scope, use_cache=use_cache)
    cls = _class(record.kind)
    if cls is SyntheticEngine:
        return cls(record, path, synthetic_world_for(record))
    if cls is ArtificialCrowdEngine:
        translators = {
            name: adapter_for(name, "translate", scope, use_cache=use_cache)
            for name in record.params["translators"]
        }
        estimators = {
            name: adapter_for(name, "quality", scope, use_cache=use_cache)
            for name in record.params["quality_estimators"]
        }
        return cls(record, path, translators, estimators)
    return cls(record, path)


def chat_model_for(
    engine: Engine | str, scope: str = "", *, use_cache: bool = True
) -> OpenAIChatEngine:
    """The chat adapter (a :class:`ChatModel` that also has ``complete_many``)."""
    adapter: OpenAIChatEngine = adapter_for(engine, "chat", scope, use_cache=use_cache)
    return adapter


def translator_for(engine: Engine | str, scope: str = "", *, use_cache: bool = True) -> Translator:
    adapter: OpenAIChatEngine | ReplayEngine = adapter_for(
        engine, "translate", scope, use_cache=use_cache
    )
    return adapter


def quality_estimator_for(
    engine: Engine | str, scope: str = "", *, use_cache: bool = True
) -> QualityEstimator:
    adapter: OpenAIChatEngine | ReplayEngine = adapter_for(
        engine, "quality", scope, use_cache=use_cache
    )
    return adapter


def difficulty_estimator_for(
    engine: Engine | str, scope: str = "", *, use_cache: bool = True
) -> DifficultyEstimator:
    """A difficulty estimator; for an artificial crowd it also has ``estimate_detailed``."""
    adapter: DifficultyEstimator = adapter_for(engine, "difficulty", scope, use_cache=use_cache)
    return adapter


def embedder_for(engine: Engine | str, scope: str = "", *, use_cache: bool = True) -> Embedder:
    adapter: Embedder = adapter_for(engine, "embed", scope, use_cache=use_cache)
    return adapter
