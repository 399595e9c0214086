"""Asking an LLM until its answer can be read (seed 001 App. B), for a batch of conversations.

Each round sends every conversation still open in one batch (one refused by the engine fails
alone, :func:`engines.interfaces.isolated`); an answer that does not parse is answered with
the reason, and the conversation goes on, up to ``attempts`` answers. What each conversation
came to is an :class:`Asked`: its parsed value, or the engine's refusal, or the last unusable
answer and why it was unusable. Every answer received is kept, since each one was billed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from engines.interfaces import Completion, EngineError, Message, isolated
from search.breaker.parsing import ParseFailure

__all__ = ["Asked", "ask_until_parsed"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass
class Asked(Generic[V]):
    value: V | None = None  # read from ``text``, where ``ok``
    text: str = ""
    ok: bool = False
    error: str = ""  # the engine's message, where it refused the conversation
    reason: str = ""  # why the last answer could not be read
    answers: list[Completion] = field(default_factory=list)

    @property
    def last(self) -> str:
        """The last answer received (empty where none was)."""
        return self.answers[-1].text if self.answers else ""


def ask_until_parsed(
    chat: Any,
    conversations: dict[K, list[Message]],
    parse: Callable[[str], V],
    reask: Callable[[str], str],
    attempts: int,
) -> dict[K, Asked[V]]:
    """What each conversation came to (see the module docstring), by key."""
    asked: dict[K, Asked[V]] = {key: Asked() for key in conversations}
    chats = dict(conversations)
    for _attempt in range(attempts):
        keys = list(chats)
        if not keys:
            break
        answers = isolated(chat.complete_many, [chats[key] for key in keys])
        for key, answer in zip(keys, answers, strict=True):
            outcome = asked[key]
            if isinstance(answer, EngineError):
                outcome.error = answer.message
                del chats[key]
                continue
            outcome.answers.append(answer)
            try:
                outcome.value = parse(answer.text)
            except ParseFailure as failure:
                outcome.reason = failure.reason
                chats[key] = [
                    *chats[key],
                    {"role": "assistant", "content": answer.text},
                    {"role": "user", "content": reask(failure.reason)},
                ]
                continue
            outcome.text, outcome.ok = answer.text, True
            del chats[key]
    return asked
