"""Near-duplicate detection over a challenge set (pure Python + numpy/scipy, no Django).

Texts become L2-normalised counts of character n-grams (3–5, inside word boundaries), hashed
into a fixed number of columns so no vocabulary is fitted or stored; cosine similarity is then a
sparse dot product. Each new text is compared with every text already in the set and with the
new texts before it, in blocks of rows, so thousands of items take a fraction of a second and
memory stays at one dense block.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import HashingVectorizer

DEFAULT_THRESHOLD = 0.8
BLOCK_ROWS = 512


# Built on first use: scikit-learn and scipy cost every process that loads the challenge-set app
# over a second of CPU at start-up, and most never compare texts.
@functools.cache
def _vectorizer() -> HashingVectorizer:
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(
        analyzer="char_wb",
        ngram_range=(3, 5),
        n_features=2**20,
        alternate_sign=False,
        norm="l2",
        lowercase=True,
    )


@dataclass(frozen=True)
class Match:
    """The most similar earlier text of a new text: ``index`` into existing + new texts."""

    index: int
    similarity: float


def _vectors(texts: Sequence[str]) -> sp.csr_matrix:
    return _vectorizer().transform([" ".join(t.split()) for t in texts]).tocsr()


def nearest_earlier(
    existing: Sequence[str], new: Sequence[str], threshold: float = DEFAULT_THRESHOLD
) -> list[Match | None]:
    """For each of ``new``, its most similar text among ``existing`` and the earlier ``new``.

    Indexes run over ``[*existing, *new]``; ``None`` when nothing reaches ``threshold``.
    """
    if not new:
        return []
    pool = _vectors([*existing, *new])
    offset = len(existing)
    pool_t = pool.T.tocsc()
    found: list[Match | None] = []
    for start in range(0, len(new), BLOCK_ROWS):
        stop = min(start + BLOCK_ROWS, len(new))
        sims = (pool[offset + start : offset + stop] @ pool_t).toarray()
        for row in range(stop - start):
            position = offset + start + row
            sims[row, position:] = -1.0  # only texts before this one
            best = int(np.argmax(sims[row])) if position else -1
            if best >= 0 and sims[row, best] >= threshold:
                found.append(Match(best, round(float(sims[row, best]), 4)))
            else:
                found.append(None)
    return found
