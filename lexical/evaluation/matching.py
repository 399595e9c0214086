"""Reading a model's choice (seed 004 App. B.2–B.3).

1. :func:`extract_answer`: the text between triple backticks (```viaje```); the last such
   block wins, since a reasoning may quote options before the final answer.
2. :func:`match_variation`: the variation a text names. An exact match of a surface form first
   (case-insensitive, on word boundaries, so "via" does not match inside "viaje"; forms in
   scripts written without spaces match as substrings); else the best ``rapidfuzz`` ratio
   over every form of every variation against the text's words and word n-grams (n up to the
   longest form's word count), accepted at ≥ 0.7 (App. B.2). The same for an LLM answer and an
   NMT output; an LLM answer is also compared as a whole.

Ties: among exact matches the longest form wins, then the earliest in the text; among fuzzy
ones the higher ratio, then the variation listed first (the more frequent).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import regex
from rapidfuzz import fuzz

__all__ = ["FUZZY_THRESHOLD", "Match", "extract_answer", "match_variation", "words"]

FUZZY_THRESHOLD = 0.7
MAX_ANSWER_CHARS = 300

_BLOCK = regex.compile(r"```(.*?)```", regex.DOTALL)
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+(?:['’\-][\p{L}\p{M}\p{N}]+)*")
_WORD_CHAR = r"[\p{L}\p{M}\p{N}]"
# Scripts without spaces between words: a form there is found as a plain substring.
_UNSPACED = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]")


def extract_answer(text: str) -> str | None:
    """The last non-empty ```...``` block, trimmed of whitespace, quotes and a trailing period;
    None when the model did not use the template."""
    blocks: list[str] = _BLOCK.findall(text or "")
    for block in reversed(blocks):
        answer = block.strip().rstrip(".").strip().strip("\"'“”«»`").strip()
        if answer and answer.lower() != "answer":
            return answer[:MAX_ANSWER_CHARS]
    return None


@dataclass(frozen=True)
class Match:
    index: int  # the variation's position in the list given
    form: str
    ratio: float  # 1.0 for an exact match
    exact: bool


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def _exact_pattern(form: str) -> regex.Pattern[str]:
    body = regex.escape(form)
    left = "" if _UNSPACED.match(form[0]) else rf"(?<!{_WORD_CHAR})"
    right = "" if _UNSPACED.match(form[-1]) else rf"(?!{_WORD_CHAR})"
    return regex.compile(left + body + right, regex.IGNORECASE)


def _exact(text: str, variations: Sequence[Sequence[str]]) -> Match | None:
    best: tuple[int, int, int] | None = None  # (-length, position, variation index)
    found: Match | None = None
    for index, forms in enumerate(variations):
        for form in forms:
            form = form.strip()
            if not form:
                continue
            hit = _exact_pattern(form).search(text)
            if hit is None:
                continue
            key = (-len(form), hit.start(), index)
            if best is None or key < best:
                best, found = key, Match(index, form, 1.0, True)
    return found


def _candidates(text: str, longest: int, whole: bool) -> list[str]:
    tokens = words(text)
    out = [" ".join(tokens[i : i + n]) for n in range(1, longest + 1) for i in range(len(tokens))]
    if whole and text.strip():
        out.append(text.strip())
    return out


def match_variation(
    text: str, variations: Sequence[Sequence[str]], *, whole: bool = False
) -> Match | None:
    """The variation (a list of surface forms each) that ``text`` names, or None.

    ``whole`` also compares the entire text (an LLM's extracted answer, which may be a phrase).
    """
    if not text or not variations:
        return None
    exact = _exact(text, variations)
    if exact is not None:
        return exact
    longest = max((len(words(f)) for forms in variations for f in forms), default=1) or 1
    candidates = [c.lower() for c in _candidates(text, longest, whole)]
    best: Match | None = None
    for index, forms in enumerate(variations):
        for form in forms:
            lowered = form.strip().lower()
            if not lowered:
                continue
            ratio = max((fuzz.ratio(lowered, c) / 100.0 for c in candidates), default=0.0)
            if ratio >= FUZZY_THRESHOLD and (best is None or ratio > best.ratio):
                best = Match(index, form, ratio, False)
    return best
