"""Data-quality statistics of a set of generated texts (seed 001 §3.2, Table 2). Pure.

numpy and sacrebleu in, plain numbers out; no Django. Where the paper leaves a formula open this
module fixes one (ADR 0015, also stated on the run page):

1. **Diversity (embd)**: mean pairwise cosine distance ``1 − cos(u, v)`` over unordered pairs of
   the texts' embeddings; a zero vector (no content) counts as orthogonal to everything.
2. **Diversity (chrF)**: mean over ordered pairs (a, b), a ≠ b, of ``1 − chrF(a | ref b) / 100``
   with sacrebleu's chrF++ (character 6-grams, word bigrams: the paper's signature
   ``nc:6|nw:2``). chrF is asymmetric, hence ordered pairs. Above ``max_pairs`` ordered pairs a
   uniform sample of that many distinct pairs is scored, drawn by an injected, seeded
   ``numpy.random.Generator``; the signature string and the number of pairs are reported.
3. **Diversity (words)**: distinct lower-cased words over all texts.
4. **Avg. word count**: mean words per text; **avg. word length**: mean characters per word
   over every word of every text (token-weighted).
5. **Source analysis** (App. B, answered by an LLM per text): distinct topics and distinct
   error modes over all texts (labels lower-cased, whitespace collapsed, end punctuation
   dropped) and the means of grammaticality, naturalness, word rarity and syntax complexity
   (each 0–100) over the texts whose analysis succeeded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    # Imported where chrF is computed: sacrebleu (and the portalocker and redis it loads) costs
    # every process that loads the search app a fifth of a second at start-up.
    from sacrebleu.metrics import CHRF

__all__ = [
    "SCALES",
    "Analysis",
    "ChrfDiversity",
    "aggregate_analyses",
    "chrf_diversity",
    "embedding_diversity",
    "normalise_label",
    "word_statistics",
    "words",
]

# The four 0–100 scales of the source analysis, in Table 2's order.
SCALES = ("grammaticality", "naturalness", "word_rarity", "syntax_complexity")
DEFAULT_MAX_PAIRS = 5000
_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)


def words(text: str) -> list[str]:
    """Words of a text: runs of letters/digits, with inner apostrophes (``don't``)."""
    return _WORD.findall(text)


def embedding_diversity(vectors: np.ndarray) -> float:
    """Mean pairwise cosine distance of the rows of ``vectors`` (n ≥ 2)."""
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] < 2:
        raise ValueError("embedding diversity needs at least two vectors (an n × d array)")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    similarity = unit @ unit.T
    upper = np.triu_indices(matrix.shape[0], k=1)
    return float(np.mean(1.0 - similarity[upper]))


@dataclass(frozen=True)
class ChrfDiversity:
    value: float
    pairs: int  # ordered pairs scored
    sampled: bool  # True when the pairs are a sample of all ordered pairs
    signature: str


def _chrf() -> CHRF:
    from sacrebleu.metrics import CHRF

    return CHRF(char_order=6, word_order=2)


def _ordered_pairs(
    n: int, max_pairs: int, rng: np.random.Generator | None
) -> list[tuple[int, int]]:
    total = n * (n - 1)
    if total <= max_pairs:
        return [(a, b) for a in range(n) for b in range(n) if a != b]
    if rng is None:
        raise ValueError(f"{total} ordered pairs exceed max_pairs={max_pairs}: pass an rng")
    # Index k in [0, n(n-1)) maps to (a, b) with b ≠ a: a = k // (n-1), b skips a.
    chosen = rng.choice(total, size=max_pairs, replace=False)
    pairs = []
    for k in sorted(int(k) for k in chosen):
        a, offset = divmod(k, n - 1)
        pairs.append((a, offset if offset < a else offset + 1))
    return pairs


def chrf_diversity(
    texts: Sequence[str],
    *,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    rng: np.random.Generator | None = None,
) -> ChrfDiversity:
    """``1 − chrF/100`` averaged over ordered pairs of ``texts`` (see the module docstring)."""
    if len(texts) < 2:
        raise ValueError("chrF diversity needs at least two texts")
    if max_pairs < 1:
        raise ValueError("max_pairs must be positive")
    metric = _chrf()
    pairs = _ordered_pairs(len(texts), max_pairs, rng)
    scores = [metric.sentence_score(texts[a], [texts[b]]).score for a, b in pairs]
    signature = metric.get_signature().format(short=True)
    sampled = len(pairs) < len(texts) * (len(texts) - 1)
    return ChrfDiversity(1.0 - fmean(scores) / 100.0, len(pairs), sampled, signature)


def word_statistics(texts: Sequence[str]) -> dict[str, float]:
    """``unique_words``, ``avg_word_count`` and ``avg_word_length`` of ``texts`` (n ≥ 1)."""
    if not texts:
        raise ValueError("word statistics need at least one text")
    tokenised = [words(text) for text in texts]
    every = [word for tokens in tokenised for word in tokens]
    return {
        "unique_words": float(len({word.lower() for word in every})),
        "avg_word_count": fmean(len(tokens) for tokens in tokenised),
        "avg_word_length": fmean(len(word) for word in every) if every else 0.0,
    }


@dataclass(frozen=True)
class Analysis:
    """One text's source analysis (App. B), already validated."""

    grammaticality: float
    naturalness: float
    word_rarity: float
    syntax_complexity: float
    topics: tuple[str, ...]
    error_modes: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {
            **{scale: getattr(self, scale) for scale in SCALES},
            "topics": list(self.topics),
            "error_modes": list(self.error_modes),
        }


def normalise_label(label: str) -> str:
    """A topic or error mode as counted: lower case, one space, no end punctuation."""
    return " ".join(label.lower().split()).strip(" .,;:!?\"'“”")


def aggregate_analyses(analyses: Sequence[Analysis]) -> dict[str, float]:
    """Distinct topics and error modes, and the mean of each 0–100 scale (n ≥ 1)."""
    if not analyses:
        raise ValueError("no analysed text to aggregate")
    topics = {normalise_label(t) for a in analyses for t in a.topics} - {""}
    modes = {normalise_label(m) for a in analyses for m in a.error_modes} - {""}
    out: dict[str, float] = {
        "unique_topics": float(len(topics)),
        "unique_error_modes": float(len(modes)),
    }
    for scale in SCALES:
        out[scale] = fmean(getattr(a, scale) for a in analyses)
    return out
