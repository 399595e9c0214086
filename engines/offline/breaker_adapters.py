"""Adapters of the offline MT-breaker world (``engines.offline.breaker_world``): a SIMULATION.

Three local kinds, answered in-process through the call path's ``local`` ledger rows (no cache,
no cost): ``breaker_editor`` (chat), ``fragile_mt`` (translate) and ``fragile_qe`` (quality).
"""

from __future__ import annotations

from collections.abc import Sequence

from engines.adapters import Adapter
from engines.offline import breaker_world
from engines.offline.chat import Replier, RuleBasedChat

__all__ = ["BreakerEditorEngine", "FragileQEEngine", "FragileTranslatorEngine"]


class BreakerEditorEngine(RuleBasedChat):
    """A rule-based "LLM" that edits texts in seed 001's formats (simulation)."""

    def replier(self) -> Replier:
        return breaker_world.editor_reply


class FragileTranslatorEngine(Adapter):
    """Translates word by word and fails on exactly its ``fails_on`` (simulation)."""

    def translate(self, texts: Sequence[str], src_lang: str, tgt_lang: str) -> list[str]:
        fails = self.engine.params.get("fails_on", list(breaker_world.FAILURES))
        return self.path.local(
            "translate",
            len(texts),
            lambda: [breaker_world.fragile_translate(t, tgt_lang, fails) for t in texts],
        )


class FragileQEEngine(Adapter):
    """Penalises exactly the fragile translator's failures (simulation)."""

    def score(self, pairs: Sequence[tuple[str, str]], src_lang: str, tgt_lang: str) -> list[float]:
        return self.path.local(
            "score", len(pairs), lambda: [breaker_world.fragile_quality(s, t) for s, t in pairs]
        )
