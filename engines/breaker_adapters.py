"""Adapters of the offline MT-breaker world (``engines.breaker_world``): a SIMULATION.

Three local kinds, answered in-process through the call path's ``local`` ledger rows (no cache,
no cost): ``breaker_editor`` (chat), ``fragile_mt`` (translate) and ``fragile_qe`` (quality).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engines import breaker_world
from engines.adapters import _Adapter
from engines.interfaces import Completion, Message

__all__ = ["BreakerEditorEngine", "FragileQEEngine", "FragileTranslatorEngine"]


def _tokens(text: str) -> int:
    return len(text.split())


class BreakerEditorEngine(_Adapter):
    """A rule-based "LLM" that edits texts in seed 001's formats (simulation)."""

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion:
        (completion,) = self.complete_many([messages], **params)
        return completion

    def complete_many(
        self, conversations: Sequence[Sequence[Message]], **params: Any
    ) -> list[Completion]:
        def run() -> list[Completion]:
            out = []
            for messages in conversations:
                text = breaker_world.editor_reply(list(messages))
                tokens_in = sum(_tokens(m["content"]) for m in messages)
                out.append(Completion(text, tokens_in, _tokens(text)))
            return out

        return self.path.local("complete", len(conversations), run)


class FragileTranslatorEngine(_Adapter):
    """Translates word by word and fails on exactly its ``fails_on`` (simulation)."""

    def translate(self, texts: Sequence[str], src_lang: str, tgt_lang: str) -> list[str]:
        fails = self.engine.params.get("fails_on", list(breaker_world.FAILURES))
        return self.path.local(
            "translate",
            len(texts),
            lambda: [breaker_world.fragile_translate(t, tgt_lang, fails) for t in texts],
        )


class FragileQEEngine(_Adapter):
    """Penalises exactly the fragile translator's failures (simulation)."""

    def score(self, pairs: Sequence[tuple[str, str]], src_lang: str, tgt_lang: str) -> list[float]:
        return self.path.local(
            "score", len(pairs), lambda: [breaker_world.fragile_quality(s, t) for s, t in pairs]
        )
