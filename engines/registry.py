"""Turn an engine (a name or a record) into the object that serves one of its capabilities.

This is the public entry point for other apps: one function, :func:`resolve`::

    from engines.registry import resolve

    translator = resolve("gpt-4o-mini", "translate", scope=f"search_run:{run.pk}")
    outputs = translator.translate(texts, "en", "cs")

Capabilities are those an engine row lists (``chat``, ``translate``, ``quality``, ``difficulty``,
``embed``; ``engines.interfaces.INTERFACES`` names the protocol each promises), plus ``world``:
the offline world a simulating kind draws from (the synthetic world), for oracles and
benchmarks.

``ADAPTERS`` maps each kind to its adapter class; an adapter builds itself from its row
(``Adapter.build``) and says what it is (``on_0_100_scale``, ``Adapter.world_of``), so a new
kind is one class plus one line here, never a branch.

``scope`` is a free label written on every ledger row (``"search_run:12"``,
``"dataset_eval:3"``) so costs can be summed per run with ``engines.selectors.cost_by_scope``
without engines knowing other apps. ``use_cache=False`` bypasses the response cache (the
benchmark and the admin "Test" button use it).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Literal, overload

from engines.adapters import Adapter
from engines.callpath import CallPath
from engines.interfaces import (
    ChatModel,
    DifficultyEstimator,
    Embedder,
    EngineError,
    QualityEstimator,
    Translator,
)
from engines.models import Engine
from engines.offline.synthetic_world import SyntheticWorld

__all__ = ["ADAPTERS", "adapter_class", "get_engine", "refusal", "resolve", "scores_on_0_100"]

# Kind → adapter class, by dotted path (as healthchecks names its transports), so that building
# one kind never imports another kind's module (the local models' stay unimported).
ADAPTERS = {
    "openai_chat": "engines.adapters.OpenAIChatEngine",
    "heuristic": "engines.adapters.HeuristicEngine",
    "replay": "engines.adapters.ReplayEngine",
    "artificial_crowd": "engines.adapters.ArtificialCrowdEngine",
    "openai_embeddings": "engines.embedding_adapters.OpenAIEmbeddingsEngine",
    "local_translator": "engines.local_models.adapters.LocalTranslatorEngine",
    "local_qe": "engines.local_models.adapters.LocalQEEngine",
    "local_difficulty": "engines.local_models.adapters.LocalDifficultyEngine",
    "local_embeddings": "engines.local_models.adapters.LocalEmbeddingsEngine",
    # Offline: simulations and deterministic stand-ins.
    "synthetic": "engines.offline.synthetic_adapters.SyntheticEngine",
    "breaker_editor": "engines.offline.breaker_adapters.BreakerEditorEngine",
    "fragile_mt": "engines.offline.breaker_adapters.FragileTranslatorEngine",
    "fragile_qe": "engines.offline.breaker_adapters.FragileQEEngine",
    "lexical_world": "engines.offline.lexical_adapters.LexicalWorldEngine",
    "hashed_embeddings": "engines.offline.hashed_adapters.HashedEmbeddingsEngine",
}

Capability = Literal["chat", "translate", "quality", "difficulty", "embed", "world"]

# What a refusal calls an engine that lacks the capability.
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


def refusal(record: Engine | None, name: str, capability: str) -> str | None:
    """Why the engine named ``name`` (its ``record``, None where no engine has that name) cannot
    serve ``capability``, in the words every refusal uses; None where it can. For checking a
    configuration before anything is built (:func:`resolve` refuses with the same words)."""
    if record is None:
        return f"there is no engine named {name!r}"
    if not record.enabled:
        return f"engine {record.name} is disabled"
    if not record.has_capability(capability):
        return f"engine {record.name} is not configured as {_ROLE_OF[capability]}"
    return None


def adapter_class(kind: str) -> type[Adapter]:
    """The adapter class registered for ``kind``."""
    module, _, name = ADAPTERS[kind].rpartition(".")
    cls: type[Adapter] = getattr(import_module(module), name)
    return cls


def scores_on_0_100(engine: Engine | str) -> bool:
    """Whether the engine's scores are on the 0–100 scale; heuristics' only rank texts. Read
    from the adapter class, so a disabled engine still answers."""
    return bool(adapter_class(get_engine(engine).kind).on_0_100_scale)


@overload
def resolve(
    engine: Engine | str, capability: Literal["chat"], scope: str = "", *, use_cache: bool = True
) -> ChatModel: ...
@overload
def resolve(
    engine: Engine | str,
    capability: Literal["translate"],
    scope: str = "",
    *,
    use_cache: bool = True,
) -> Translator: ...
@overload
def resolve(
    engine: Engine | str,
    capability: Literal["quality"],
    scope: str = "",
    *,
    use_cache: bool = True,
) -> QualityEstimator: ...
@overload
def resolve(
    engine: Engine | str,
    capability: Literal["difficulty"],
    scope: str = "",
    *,
    use_cache: bool = True,
) -> DifficultyEstimator: ...
@overload
def resolve(
    engine: Engine | str, capability: Literal["embed"], scope: str = "", *, use_cache: bool = True
) -> Embedder: ...
@overload
def resolve(
    engine: Engine | str, capability: Literal["world"], scope: str = "", *, use_cache: bool = True
) -> SyntheticWorld: ...
@overload
def resolve(
    engine: Engine | str, capability: str, scope: str = "", *, use_cache: bool = True
) -> Any: ...
def resolve(
    engine: Engine | str, capability: str, scope: str = "", *, use_cache: bool = True
) -> Any:
    """What serves ``capability`` of ``engine``: its adapter, calls booked under ``scope``; for
    ``world``, the offline world it simulates (a disabled engine still has its world).

    A permanent :class:`EngineError` says why not: no engine of that name, a disabled engine, an
    engine not configured for the capability, or a kind that simulates no world.
    """
    record = get_engine(engine)
    if capability == "world":
        world = adapter_class(record.kind).world_of(record)
        if world is None:
            raise EngineError(f"engine {record.name} is not synthetic", permanent=True)
        return world
    if capability not in _ROLE_OF:
        raise EngineError(
            f"there is no capability {capability!r} (one of {', '.join(_ROLE_OF)}, world)",
            permanent=True,
        )
    problem = refusal(record, record.name, capability)
    if problem:
        if record.enabled:  # configured for other capabilities: name them
            problem += f" (capabilities: {', '.join(record.capabilities) or 'none'})"
        raise EngineError(problem, permanent=True)
    path = CallPath(record, scope=scope, use_cache=use_cache)
    return adapter_class(record.kind).build(record, path, resolve)
