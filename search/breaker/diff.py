"""Word-level differences between consecutive sources. Pure Python.

The chain viewer marks what each step changed, and the edit share (how much of the previous
source an edit changed, which the prompt caps at 75 % by default) is recorded per step.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Literal

__all__ = ["Token", "edit_share", "word_diff"]

Op = Literal["same", "added", "removed"]
Token = tuple[Op, str]


def _words(text: str) -> list[str]:
    return text.split()


def word_diff(previous: str, current: str) -> list[Token]:
    """``current`` against ``previous`` as (op, words) runs: unchanged, added and removed."""
    old, new = _words(previous), _words(current)
    tokens: list[Token] = []
    matcher = SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            tokens.append(("same", " ".join(old[i1:i2])))
            continue
        if i2 > i1:
            tokens.append(("removed", " ".join(old[i1:i2])))
        if j2 > j1:
            tokens.append(("added", " ".join(new[j1:j2])))
    return tokens


def edit_share(previous: str, current: str) -> float:
    """Share of words changed: 1 − (words kept in order) / (words in the longer text).

    0 for an identical text, 1 for a text sharing no word with the previous one; insertions
    count as much as replacements, so doubling a text's length is a 50 % edit.
    """
    old, new = _words(previous), _words(current)
    longest = max(len(old), len(new))
    if longest == 0:
        return 0.0
    matcher = SequenceMatcher(a=old, b=new, autojunk=False)
    kept = sum(block.size for block in matcher.get_matching_blocks())
    return 1.0 - kept / longest
