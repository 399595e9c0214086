"""Tokens with their lemma, POS and character offsets (seed 004 App. B.1: both sides are
lemmatised, the source is POS-tagged).

Lemmas come from ``simplemma`` (dictionary lookups, no model weights), lowercased; a language it
does not know keeps the lowercased word as its lemma (``Lemmatiser.supported`` says which). POS
tags come from an optional spaCy pipeline (``tagging``); without one every POS is ``""``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

import simplemma
from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES

__all__ = [
    "Lemmatiser",
    "Token",
    "is_content",
    "language_code",
    "stop_words",
    "tokenise",
]

# Words (letters/digits with inner hyphens or apostrophes) or single other non-space symbols.
_TOKEN = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")
_HAS_LETTER = re.compile(r"[^\W\d_]")
# The lemma cache is bounded by the vocabulary; this caps it for corpora with huge ones.
_CACHE_LIMIT = 500_000


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    start: int
    end: int
    lemma: str
    pos: str = ""


def tokenise(text: str) -> list[tuple[str, int, int]]:
    """(word, start, end) for each token, offsets as Python string indices."""
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def language_code(lang: str) -> str:
    """The primary subtag, lowercased: ``en-US`` → ``en``."""
    return lang.replace("_", "-").split("-", 1)[0].strip().lower()


class Lemmatiser:
    """simplemma for one language, with a vocabulary-sized cache."""

    def __init__(self, lang: str) -> None:
        self.lang = language_code(lang)
        self.supported = self.lang in SUPPORTED_LANGUAGES
        self._cache: dict[str, str] = {}

    def __call__(self, word: str) -> str:
        lower = word.lower()
        lemma = self._cache.get(lower)
        if lemma is None:
            lemma = simplemma.lemmatize(lower, lang=self.lang).lower() if self.supported else lower
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[lower] = lemma
        return lemma

    def tokens(self, text: str) -> list[Token]:
        return [Token(w, s, e, self(w)) for w, s, e in tokenise(text)]


@lru_cache(maxsize=32)
def stop_words(lang: str, top_n: int) -> frozenset[str]:
    """The ``top_n`` most frequent words of ``lang`` (wordfreq) and their lemmas: function words
    mostly, which align to many target words and would otherwise all look like concepts."""
    if top_n <= 0:
        return frozenset()
    import wordfreq

    code = language_code(lang)
    try:
        words = wordfreq.top_n_list(code, top_n)
    except LookupError:
        return frozenset()
    lemmatise = Lemmatiser(code)
    return frozenset(words) | frozenset(lemmatise(w) for w in words)


def is_content(token: Token, stops: frozenset[str], exclude: bool) -> bool:
    """Whether a token may be a concept or a variation: with ``exclude``, words with a letter
    that are not stop words (by form or lemma); otherwise any word with a letter or digit."""
    if not exclude:
        return any(ch.isalnum() for ch in token.text)
    if not _HAS_LETTER.search(token.text):
        return False
    return token.lemma not in stops and token.text.lower() not in stops


Tagger = Callable[[list[str]], list[list[Token]]]


def analyse(
    texts: Iterable[str], lemmatiser: Lemmatiser, tagger: Tagger | None
) -> list[list[Token]]:
    """Tokens of each text; with a tagger its tokenisation and POS, with our lemmas."""
    batch = list(texts)
    if tagger is None:
        return [lemmatiser.tokens(text) for text in batch]
    return [
        [Token(t.text, t.start, t.end, lemmatiser(t.text), t.pos) for t in tokens]
        for tokens in tagger(batch)
    ]
