"""Generated attention checks: corrupt one phrase of a translation (pure Python + numpy).

The corrupted phrase is replaced by a phrase of about the same length taken from another
translation of the campaign (so the sentence still looks fluent at a glance but its meaning is
broken), or, without a donor, by the phrase's words in reverse order with their letters
reversed. An attentive annotator marks an error span overlapping the corrupted phrase and gives
a lower score than the original translation got.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


@dataclass(frozen=True)
class Corruption:
    text: str
    start: int
    end: int
    original_phrase: str


def _phrase_bounds(text: str, rng: np.random.Generator) -> tuple[int, int] | None:
    """Offsets of a phrase: 1–3 words, or for scripts without spaces 2–6 characters."""
    if _CJK.search(text) and " " not in text.strip():
        chars = [m.start() for m in re.finditer(r"\w", text)]
        if len(chars) < 4:
            return None
        length = min(len(chars) // 3 or 1, int(rng.integers(2, 7)))
        first = int(rng.integers(0, len(chars) - length + 1))
        return chars[first], chars[first + length - 1] + 1
    words = list(_WORD.finditer(text))
    if len(words) < 3:
        return None
    length = min(3, max(1, len(words) // 4), int(rng.integers(1, 4)))
    first = int(rng.integers(0, len(words) - length + 1))
    return words[first].start(), words[first + length - 1].end()


def corrupt(text: str, donors: list[str], rng: np.random.Generator) -> Corruption | None:
    """Replace one phrase of ``text``; ``None`` when the text is too short to corrupt."""
    bounds = _phrase_bounds(text, rng)
    if bounds is None:
        return None
    start, end = bounds
    phrase = text[start:end]
    replacement = ""
    candidates = [d for d in donors if d.strip() and d != text]
    for _ in range(min(5, len(candidates))):
        donor = candidates[int(rng.integers(0, len(candidates)))]
        donor_bounds = _phrase_bounds(donor, rng)
        if donor_bounds is not None:
            replacement = donor[donor_bounds[0] : donor_bounds[1]]
            if replacement.casefold() != phrase.casefold():
                break
            replacement = ""
    if not replacement:
        words = _WORD.findall(phrase) or [phrase]
        replacement = " ".join(word[::-1] for word in reversed(words))
        if replacement == phrase:
            replacement = "".join(reversed(phrase)) + phrase
    new_text = text[:start] + replacement + text[end:]
    return Corruption(new_text, start, start + len(replacement), phrase)
