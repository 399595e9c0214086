"""Reading the LLM's answers (seed 001 App. B formats). Pure Python.

Model output is untrusted: the answer may think aloud, quote the instructions (which contain
the format itself), wrap the text in code fences or quotes, or run out of tokens before the
closing bars. The text is taken from the *last* ``SOURCE |||…|||`` (a text spanning several
lines included); an answer without one is a :class:`ParseFailure`, which the caller answers
with a bounded number of re-asks.
"""

from __future__ import annotations

import re

__all__ = ["MAX_SOURCE_CHARS", "ParseFailure", "format_score", "parse_source", "word_count"]

MAX_SOURCE_CHARS = 5000  # a "text" longer than this is a runaway answer, not a source

# "SOURCE", optional colon, three or more bars, the text (lazy, across lines), three bars.
_CLOSED = re.compile(r"SOURCE\s*:?\s*\|{3,}(.*?)\|{3,}", re.IGNORECASE | re.DOTALL)
_OPEN = re.compile(r"SOURCE\s*:?\s*\|{3,}", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"^<\s*(source[_ ]?text|text)\s*>$|^\.\.\.$|^…$", re.IGNORECASE)


class ParseFailure(ValueError):
    """The answer holds no usable source text; ``reason`` says why (shown on the chain)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _clean(text: str) -> str:
    text = text.strip()
    if text.startswith("```") and text.endswith("```") and len(text) >= 6:
        text = text[3:-3].strip()
    for left, right in (('"', '"'), ("“", "”"), ("'", "'"), ("`", "`")):
        if len(text) >= 2 and text.startswith(left) and text.endswith(right):
            text = text[1:-1].strip()
    return text


def parse_source(answer: str) -> str:
    """The text of the last ``SOURCE |||…|||`` in ``answer`` (see the module docstring)."""
    if not answer or not answer.strip():
        raise ParseFailure("the answer is empty")
    candidates = [_clean(m.group(1)) for m in _CLOSED.finditer(answer)]
    # Placeholders are the format quoted back from the instructions, not an answer.
    candidates = [c for c in candidates if c and not _PLACEHOLDER.match(c)]
    text = candidates[-1] if candidates else ""
    if not text:
        # Ran out of tokens before the closing bars: take what follows the last opening ones,
        # but only when nothing else follows (an unclosed marker mid-answer is not a text).
        opens = list(_OPEN.finditer(answer))
        if opens:
            text = _clean(answer[opens[-1].end() :].rstrip("|"))
            if _PLACEHOLDER.match(text):
                text = ""
    if not text:
        raise ParseFailure("no 'SOURCE |||…|||' with a text in the answer")
    if len(text) > MAX_SOURCE_CHARS:
        raise ParseFailure(f"the source text is longer than {MAX_SOURCE_CHARS} characters")
    return " ".join(text.split()) if "\n" not in text else text


def format_score(quality: float) -> str:
    """A quality as the paper shows it to the LLM: ``SCORE |||71.3%|||``."""
    return f"SCORE |||{quality:.1f}%|||"


def word_count(text: str) -> int:
    return len(text.split())
