"""Offline embeddings: hashed character n-grams (a deterministic stand-in, not a language model).

Each text is lower-cased, padded with spaces, cut into character n-grams (3 to 5 by default),
and every n-gram adds ±1 to one of ``dim`` buckets chosen by a stable hash (the hashing trick,
Weinberger et al. 2009; the sign halves the bias of collisions). The vector is L2-normalised, so
cosine similarity is the dot product. Texts sharing much surface form are close; this measures
lexical, not semantic, similarity, and the pages label it so. Pure Python + numpy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

__all__ = ["DEFAULT_DIM", "DEFAULT_NGRAM", "hashed_embeddings"]

DEFAULT_DIM = 256
DEFAULT_NGRAM = (3, 5)


def _bucket(gram: str, dim: int) -> tuple[int, float]:
    # blake2b, not hash(): Python's string hash is salted per process.
    digest = hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    return value % dim, 1.0 if (value >> 63) & 1 else -1.0


def _vector(text: str, dim: int, ngram: tuple[int, int]) -> np.ndarray:
    padded = f" {' '.join(text.lower().split())} "
    vector = np.zeros(dim, dtype=np.float64)
    for n in range(ngram[0], ngram[1] + 1):
        for start in range(max(0, len(padded) - n + 1)):
            index, sign = _bucket(padded[start : start + n], dim)
            vector[index] += sign
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def hashed_embeddings(
    texts: Sequence[str], dim: int = DEFAULT_DIM, ngram: tuple[int, int] = DEFAULT_NGRAM
) -> np.ndarray:
    """One unit-length row per text (a zero row for a text too short to have an n-gram)."""
    if not texts:
        return np.zeros((0, dim), dtype=np.float64)
    return np.vstack([_vector(text, dim, ngram) for text in texts])
