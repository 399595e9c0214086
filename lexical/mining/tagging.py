"""Optional POS tags for the source side from a spaCy pipeline installed locally (by package
name or path); never a download. Without one, concepts are keyed by lemma alone."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any

from lexical.mining.text import Tagger, Token

__all__ = ["TaggerUnavailable", "load_tagger", "spacy_installed"]


class TaggerUnavailable(RuntimeError):
    pass


def spacy_installed() -> bool:
    return importlib.util.find_spec("spacy") is not None


@lru_cache(maxsize=4)
def _load(pipeline: str) -> Any:
    import spacy

    # Only the tagger is needed (and what it listens to).
    return spacy.load(pipeline, exclude=["ner", "parser", "lemmatizer", "textcat"])


def load_tagger(pipeline: str) -> Tagger:
    """A tagger over a spaCy pipeline; raises :class:`TaggerUnavailable` with the reason."""
    if not spacy_installed():
        raise TaggerUnavailable("spaCy is not installed, so POS tagging is not available")
    is_path = Path(pipeline).exists()
    if not is_path and importlib.util.find_spec(pipeline.replace("-", "_")) is None:
        raise TaggerUnavailable(f"no spaCy pipeline named {pipeline!r} is installed")
    try:
        nlp = _load(pipeline)
    except (OSError, ValueError, ImportError) as exc:
        raise TaggerUnavailable(
            f"the spaCy pipeline {pipeline!r} cannot be loaded: {exc}"
        ) from None
    if not ({"tagger", "morphologizer"} & set(nlp.pipe_names)):
        raise TaggerUnavailable(f"the spaCy pipeline {pipeline!r} has no tagger")

    def tag(texts: list[str]) -> list[list[Token]]:
        return [
            [Token(t.text, t.idx, t.idx + len(t.text), "", t.pos_) for t in doc if not t.is_space]
            for doc in nlp.pipe(texts, batch_size=256)
        ]

    return tag
