"""The adapter of the offline lexical-selection world (``engines.offline.lexical_world``): a
SIMULATION.

One local kind, ``lexical_world`` (chat), answered in-process through the call path's ``local``
ledger rows (no cache, no cost).
"""

from __future__ import annotations

from functools import partial

from engines.offline import lexical_world
from engines.offline.chat import Replier, RuleBasedChat

__all__ = ["LexicalWorldEngine"]


class LexicalWorldEngine(RuleBasedChat):
    """A rule-based "LLM" that writes lexical rules and picks variations (simulation)."""

    def replier(self) -> Replier:
        skill = float(self.engine.params.get("skill", lexical_world.DEFAULT_SKILL))
        rule_words = int(self.engine.params.get("rule_words", lexical_world.DEFAULT_RULE_WORDS))
        return partial(
            lexical_world.world_reply, engine=self.engine.name, skill=skill, rule_words=rule_words
        )
