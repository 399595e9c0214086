"""The adapter of an OpenAI-compatible ``/embeddings`` API (the ``embed`` capability; the
offline hashed embeddings are ``engines.offline.hashed_adapters``)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from engines.adapters import Adapter
from engines.callpath import RemoteJob
from engines.openai_client import EmbeddingsClient
from engines.prompts import UnparseableOutput

__all__ = ["OpenAIEmbeddingsEngine"]

DEFAULT_BATCH = 64
PROMPT_VERSION = "embed-v1"


def _vectors(text: str) -> list[list[float]]:
    """The cached answer text back to vectors; a non-finite value is unusable output."""
    vectors = json.loads(text)
    if not all(math.isfinite(v) for vector in vectors for v in vector):
        raise UnparseableOutput("an embedding holds a value that is not a finite number")
    return vectors


class OpenAIEmbeddingsEngine(Adapter):
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
