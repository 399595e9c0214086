"""Source-only difficulty heuristics of seed 002 §4.1: length, word rarity, syntactic depth.

Pure Python (no Django). The ``heuristic`` engine kind wraps these; search and lexical may call
them directly for features.

* ``token_count``: number of ``wordfreq.tokenize`` tokens (seed 002 "text length").
* ``char_count``: number of characters (Unicode code points).
* ``word_rarity``: the mean ``wordfreq.word_frequency`` over the text's tokens. Seed 002 defines
  rarity as the *negative* mean frequency; like the paper's own code we return the mean itself,
  which is already quality-like (frequent words = easier).
* ``words_available``: whether the two word-based features can run for a source language: Chinese
  needs jieba, Japanese and Korean MeCab (wordfreq's ``cjk`` extra, installed with Hardset), and
  rarity needs a wordfreq word list. Callers check it before a job starts, as for syntax.
* ``syntax_depth``: height of the dependency tree (seed 002 §4.1), the maximum over sentences,
  from a spaCy pipeline that is installed locally. Nothing is ever downloaded: with no pipeline
  for the language it raises :class:`HeuristicUnavailable` instead of guessing.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import langcodes

# wordfreq is imported in the functions that use it: with its tokenizers it costs every process
# that loads the engines a fifth of a second at start-up, and most never score a text.
from engines.interfaces import EngineError, HeuristicUnavailable

__all__ = [
    "char_count",
    "spacy_pipeline_for",
    "syntax_available",
    "syntax_depth",
    "token_count",
    "tree_height",
    "word_rarity",
    "words_available",
    "words_unavailable_reason",
]

# Smaller pipelines first: depth needs only the parser, and they load fastest.
_SIZE_ORDER = ("sm", "md", "lg", "trf")


def _tokens(text: str, lang: str) -> list[str]:
    import wordfreq

    try:
        return list(wordfreq.tokenize(text, lang))
    except ModuleNotFoundError as exc:
        # wordfreq tokenizes Chinese with jieba and Japanese/Korean with MeCab, optional extras.
        raise HeuristicUnavailable(
            f"wordfreq needs the optional module {exc.name!r} to tokenize language {lang!r}"
        ) from exc


@lru_cache(maxsize=64)
def words_unavailable_reason(lang: str, *, frequencies: bool = False) -> str | None:
    """Why ``lang`` cannot be tokenized (or, with ``frequencies``, has no word list), or None.

    Tokenizing an empty text loads the language's tokenizer, so a missing module shows here.
    """
    try:
        _tokens("", lang)
    except HeuristicUnavailable as exc:
        return str(exc)
    if frequencies and not _has_word_list(lang):
        return f"wordfreq has no word list for language {lang!r}"
    return None


def _has_word_list(lang: str) -> bool:
    """Whether wordfreq's nearest list is of the same language (it would fall back to another:
    'tlh' gets the English list, which would make rarity silently meaningless)."""
    import wordfreq

    try:
        best, _distance = langcodes.closest_match(
            lang, list(wordfreq.available_languages()), max_distance=60
        )
        return best != "und" and langcodes.get(best).language == langcodes.get(lang).language
    except (LookupError, ValueError):
        return False


def words_available(lang: str, *, frequencies: bool = False) -> bool:
    """Whether :func:`token_count` (with ``frequencies``: :func:`word_rarity`) runs for lang."""
    return words_unavailable_reason(lang, frequencies=frequencies) is None


def token_count(text: str, lang: str) -> int:
    """Length in ``wordfreq.tokenize`` tokens."""
    return len(_tokens(text, lang))


def char_count(text: str) -> int:
    """Length in characters (code points)."""
    return len(text)


def word_rarity(text: str, lang: str) -> float:
    """Mean word frequency (0–1) of the text's tokens; 0.0 for a text with no word tokens.

    Higher = more common words = easier, so the value is quality-like as it stands.
    """
    import wordfreq

    tokens = _tokens(text, lang)
    if not tokens:
        return 0.0
    try:
        freqs = [wordfreq.word_frequency(token, lang) for token in tokens]
    except LookupError as exc:
        raise HeuristicUnavailable(f"wordfreq has no word list for language {lang!r}") from exc
    return float(sum(freqs) / len(freqs))


def tree_height(heads: Sequence[int]) -> int:
    """Height (nodes on the longest root-to-leaf path) of a forest given by head indices.

    ``heads[i]`` is the index of token ``i``'s head, and a root is its own head (spaCy's
    convention). One word alone has height 1; an empty sequence has height 0. Raises
    ``ValueError`` on a cycle or an index out of range rather than looping.
    """
    n = len(heads)
    depth = [0] * n
    for start in range(n):
        path: list[int] = []
        node = start
        while depth[node] == 0:
            head = heads[node]
            if not 0 <= head < n:
                raise ValueError(f"head index {head} of token {node} is out of range")
            if head == node:
                depth[node] = 1
                break
            if node in path:
                raise ValueError("the head indices contain a cycle")
            path.append(node)
            node = head
        for item in reversed(path):
            depth[item] = depth[heads[item]] + 1
    return max(depth, default=0)


def _spacy_installed() -> bool:
    return importlib.util.find_spec("spacy") is not None


def spacy_pipeline_for(lang: str) -> str | None:
    """Name of an installed spaCy pipeline package for ``lang`` with a parser, or None."""
    if not _spacy_installed():
        return None
    import spacy.util

    names = [name for name in spacy.util.get_installed_models() if name.startswith(f"{lang}_")]

    def size_rank(name: str) -> int:
        suffix = name.rsplit("_", 1)[-1]
        return _SIZE_ORDER.index(suffix) if suffix in _SIZE_ORDER else len(_SIZE_ORDER)

    for name in sorted(names, key=lambda name: (size_rank(name), name)):
        meta: dict[str, Any] = spacy.util.get_model_meta(spacy.util.get_package_path(name))
        if "parser" in (meta.get("pipeline") or []):
            return name
    return None


def syntax_available(lang: str, pipeline: str | None = None) -> bool:
    """Whether :func:`syntax_depth` can run for ``lang`` (optionally with a named pipeline)."""
    if pipeline:
        return _spacy_installed() and importlib.util.find_spec(pipeline) is not None
    return spacy_pipeline_for(lang) is not None


_load_lock = threading.Lock()


@lru_cache(maxsize=8)
def _load(name: str) -> Any:
    import spacy

    # Only what depth needs: the parser (and what it listens to); never a download.
    return spacy.load(name, exclude=["ner", "lemmatizer", "textcat"])


def syntax_depth(text: str, lang: str, pipeline: str | None = None) -> int:
    """Dependency-tree height of ``text`` (max over its sentences) with a local spaCy pipeline.

    ``pipeline`` names an installed package (e.g. ``"en_core_web_sm"``); by default the smallest
    installed pipeline for ``lang`` with a parser is used.
    """
    if not _spacy_installed():
        raise HeuristicUnavailable(
            "syntactic depth needs spaCy and a pipeline for the language; spaCy is not installed"
        )
    name = pipeline or spacy_pipeline_for(lang)
    if name is None:
        raise HeuristicUnavailable(
            f"no spaCy pipeline with a parser is installed for language {lang!r}; install one "
            f"(e.g. the {lang}_core_*_sm package) to use syntactic depth"
        )
    if not syntax_available(lang, name):
        raise HeuristicUnavailable(f"spaCy pipeline {name!r} is not installed")
    with _load_lock:
        try:
            nlp = _load(name)
        except OSError as exc:
            raise HeuristicUnavailable(f"spaCy pipeline {name!r} cannot be loaded: {exc}") from exc
    doc = nlp(text)
    try:
        return tree_height([token.head.i for token in doc])
    except ValueError as exc:
        raise EngineError(f"spaCy returned a malformed parse: {exc}", permanent=True) from exc
