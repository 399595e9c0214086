"""The adapter of the offline lexical-selection world (``engines.lexical_world``): a SIMULATION.

One local kind, ``lexical_world`` (chat), answered in-process through the call path's ``local``
ledger rows (no cache, no cost).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engines import lexical_world
from engines.adapters import _Adapter
from engines.interfaces import Completion, Message

__all__ = ["LexicalWorldEngine"]


def _tokens(text: str) -> int:
    return len(text.split())


class LexicalWorldEngine(_Adapter):
    """A rule-based "LLM" that writes lexical rules and picks variations (simulation)."""

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion:
        (completion,) = self.complete_many([messages], **params)
        return completion

    def complete_many(
        self, conversations: Sequence[Sequence[Message]], **params: Any
    ) -> list[Completion]:
        skill = float(self.engine.params.get("skill", lexical_world.DEFAULT_SKILL))
        rule_words = int(self.engine.params.get("rule_words", lexical_world.DEFAULT_RULE_WORDS))

        def run() -> list[Completion]:
            out = []
            for messages in conversations:
                text = lexical_world.world_reply(
                    list(messages), self.engine.name, skill=skill, rule_words=rule_words
                )
                tokens_in = sum(_tokens(m["content"]) for m in messages)
                out.append(Completion(text, tokens_in, _tokens(text)))
            return out

        return self.path.local("complete", len(conversations), run)
