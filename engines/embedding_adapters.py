"""Adapters of the ``embed`` capability: an OpenAI-compatible ``/embeddings`` API and the
offline hashed character n-gram embeddings (``engines.hashed_embeddings``)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from engines.adapters import _Adapter
from engines.callpath import RemoteJob
from engines.hashed_embeddings import DEFAULT_DIM, DEFAULT_NGRAM, hashed_embeddings
from engines.openai_client import EmbeddingsClient
from engines.prompts import UnparseableOutput

__all__ = ["HashedEmbeddingsEngine", "OpenAIEmbeddingsEngine"]

DEFAULT_BATCH = 64
PROMPT_VERSION = "embed-v1"


def _vectors(text: str) -> list[list[float]]:
    """The cached answer text back to vectors; a non-finite value is unusable output."""
    vectors = json.loads(text)
    if not all(math.isfinite(v) for vector in vectors for v in vector):
        raise UnparseableOutput("an embedding holds a value that is not a finite number")
    return vectors


class OpenAIEmbeddingsEngine(_Adapter):
    """``POST {base_url}/embeddings`` in batches of ``batch_size`` inputs (cached per batch)."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        size = int(self.engine.params.get("batch_size", DEFAULT_BATCH))
        params = {}
        if "dimensions" in self.engine.params:
            params["dimensions"] = int(self.engine.params["dimensions"])
        jobs = [
            RemoteJob(
                [{"role": "user", "content": text} for text in texts[start : start + size]],
                params,
                _vectors,
                PROMPT_VERSION,
            )
            for start in range(0, len(texts), size)
        ]
        answers = self.path.remote("embed", jobs, client=EmbeddingsClient)
        return [vector for answer in answers for vector in answer.value]


class HashedEmbeddingsEngine(_Adapter):
    """Deterministic offline embeddings (lexical similarity only; see the module it calls)."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        dim = int(self.engine.params.get("dim", DEFAULT_DIM))
        ngram = tuple(self.engine.params.get("ngram", DEFAULT_NGRAM))

        def run() -> list[list[float]]:
            return hashed_embeddings(list(texts), dim, (int(ngram[0]), int(ngram[1]))).tolist()

        return self.path.local("embed", len(texts), run)
