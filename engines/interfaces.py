"""The narrow, batch-first interfaces every engine kind implements (DESIGN.md §2).

Pure Python: no Django import, so the maths modules of other apps can type against these
protocols without pulling in the ORM. Objects implementing them are built by
``engines.registry.resolve(engine, capability)`` (``INTERFACES`` says which protocol each
capability promises), and route every call through the one call path (cache, ledger,
concurrency limit, retries).

Conventions:

* Every method takes and returns a batch; results are in input order, one per input.
* Quality is on 0–100, higher is better. A ``DifficultyEstimator`` returns a *quality-like*
  score (higher = easier, the convention of seed 002); where the 0–100 scale applies,
  difficulty = 100 − quality. Estimators whose scores are not on 0–100 (the heuristics) say so
  with ``on_0_100_scale = False``; only their ranking is meaningful.
* Failures raise :class:`EngineError`. ``permanent=True`` means retrying the same input will not
  help (bad request, bad key, unknown model, persistent unparseable output, unavailable
  heuristic, missing replay entry); ``permanent=False`` means a later retry may succeed
  (timeouts, connection errors, 429, 5xx).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = [
    "INTERFACES",
    "ChatModel",
    "Completion",
    "CrowdResult",
    "DifficultyEstimator",
    "Embedder",
    "EngineError",
    "HeuristicUnavailable",
    "Message",
    "PermanentEngineError",
    "QualityEstimator",
    "Translator",
    "isolated",
]

# {"role": "system" | "user" | "assistant", "content": "..."}, as in the OpenAI chat protocol.
Message = dict[str, str]
T = TypeVar("T")


class EngineError(Exception):
    """A failed engine call. ``permanent`` tells the caller whether retrying can help."""

    def __init__(self, message: str, permanent: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.permanent = permanent

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, permanent={self.permanent})"


def transient_engine_error(exc: BaseException) -> bool:
    """Whether ``exc`` is an engine error that retrying can help (a rate limit, a timeout): the
    transient test a job kind passes to the round kernel (``rounds.LeasedJobKind``)."""
    return isinstance(exc, EngineError) and not exc.permanent


def isolated(call: Callable[[list[T]], list[Any]], items: list[T]) -> list[Any | EngineError]:
    """``call`` on the batch; after a permanent error, item by item (answers already received
    are cache hits), so one bad item fails alone, its answer the error. Transient errors
    propagate."""
    if not items:
        return []
    try:
        return call(items)
    except EngineError as exc:
        if not exc.permanent:
            raise
        if len(items) == 1:
            return [exc]
    out: list[Any] = []
    for item in items:
        try:
            out.append(call([item])[0])
        except EngineError as exc:
            if not exc.permanent:
                raise
            out.append(exc)
    return out


# How a job kind whose rounds call engines treats their errors (``rounds.LeasedJobKind``): a
# transient one runs the round again later, a permanent one fails the job with its message.
ENGINE_ERRORS: dict[str, Any] = {"transient": transient_engine_error, "permanent": (EngineError,)}


class PermanentEngineError(EngineError):
    """An engine error that retrying cannot help, whatever the call: always permanent."""

    def __init__(self, message: str) -> None:
        super().__init__(message, permanent=True)


class HeuristicUnavailable(PermanentEngineError):
    """A heuristic that cannot run here (e.g. no spaCy pipeline for the language).

    Always permanent: the engine says it is unavailable rather than guessing.
    """


@dataclass(frozen=True)
class Completion:
    """One chat completion: the assistant's text and the tokens the provider billed."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0


@dataclass(frozen=True)
class CrowdResult:
    """One source text scored by an artificial crowd (seed 002 §4.4).

    ``translations`` maps translator engine name to its translation; ``scores`` maps
    (translator name, QE engine name) to the 0–100 quality of that translation; ``quality`` is
    the mean of all scores (difficulty = 100 − quality).
    """

    translations: dict[str, str]
    scores: dict[tuple[str, str], float]
    quality: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def difficulty(self) -> float:
        return 100.0 - self.quality


@runtime_checkable
class ChatModel(Protocol):
    def complete(self, messages: Sequence[Message], **params: Any) -> Completion:
        """One chat completion. ``params`` (temperature, max_tokens, seed, ...) override the
        engine's configured parameters for this call and are part of the cache key."""
        ...

    def complete_many(
        self, conversations: Sequence[Sequence[Message]], **params: Any
    ) -> list[Completion]:
        """Several independent completions (sent concurrently within the engine's limit)."""
        ...


@runtime_checkable
class Translator(Protocol):
    def translate(self, texts: Sequence[str], src_lang: str, tgt_lang: str) -> list[str]: ...


@runtime_checkable
class QualityEstimator(Protocol):
    def score(self, pairs: Sequence[tuple[str, str]], src_lang: str, tgt_lang: str) -> list[float]:
        """Quality 0–100 (higher = better) of each (source, translation) pair."""
        ...


@runtime_checkable
class DifficultyEstimator(Protocol):
    on_0_100_scale: bool

    def estimate(
        self, texts: Sequence[str], src_lang: str, tgt_lang: str | None = None
    ) -> list[float]:
        """Quality-like score per source text: higher = easier."""
        ...


@runtime_checkable
class Embedder(Protocol):
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, all of the same dimension."""
        ...


# The interface an engine promises for each capability its row may list.
INTERFACES: dict[str, type] = {
    "chat": ChatModel,
    "translate": Translator,
    "quality": QualityEstimator,
    "difficulty": DifficultyEstimator,
    "embed": Embedder,
}
