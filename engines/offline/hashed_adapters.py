"""The adapter of the offline hashed character n-gram embeddings
(``engines.offline.hashed_embeddings``): a deterministic stand-in, not a language model.

One local kind, ``hashed_embeddings`` (embed), answered in-process through the call path's
``local`` ledger rows (no cache, no cost).
"""

from __future__ import annotations

from collections.abc import Sequence

from engines.adapters import Adapter
from engines.offline.hashed_embeddings import DEFAULT_DIM, DEFAULT_NGRAM, hashed_embeddings

__all__ = ["HashedEmbeddingsEngine"]


class HashedEmbeddingsEngine(Adapter):
    """Deterministic offline embeddings (lexical similarity only; see the module it calls)."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        dim = int(self.engine.params.get("dim", DEFAULT_DIM))
        ngram = tuple(self.engine.params.get("ngram", DEFAULT_NGRAM))

        def run() -> list[list[float]]:
            return hashed_embeddings(list(texts), dim, (int(ngram[0]), int(ngram[1]))).tolist()

        return self.path.local("embed", len(texts), run)
