"""The chat shape of the offline worlds: a rule-based "LLM" answering in-process.

Each world's chat kind says how it replies (:meth:`RuleBasedChat.replier`); this class answers
one conversation or a batch through the call path's ``local`` ledger rows (no cache, no cost),
counting words as tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engines.adapters import Adapter
from engines.interfaces import Completion, Message

__all__ = ["RuleBasedChat"]

Replier = Callable[[list[Message]], str]


def _tokens(text: str) -> int:
    return len(text.split())


class RuleBasedChat(Adapter):
    """A simulated chat model: ``replier()`` turns one conversation into the reply's text."""

    def replier(self) -> Replier:
        raise NotImplementedError

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion:
        (completion,) = self.complete_many([messages], **params)
        return completion

    def complete_many(
        self, conversations: Sequence[Sequence[Message]], **params: Any
    ) -> list[Completion]:
        reply = self.replier()

        def run() -> list[Completion]:
            out = []
            for messages in conversations:
                text = reply(list(messages))
                tokens_in = sum(_tokens(m["content"]) for m in messages)
                out.append(Completion(text, tokens_in, _tokens(text)))
            return out

        return self.path.local("complete", len(conversations), run)
