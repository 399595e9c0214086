"""Lines and numbers of release files, read strictly (no Django).

Release files are line-aligned: line i of a source, a reference and every system output is the
same segment. So lines are split on ``\\n`` only (a trailing ``\\r`` dropped), never on the other
characters Python's ``splitlines`` treats as breaks (``\\x85``, ``\\u2028``, form feeds), which
appear inside real segments and would shift every line after them.
"""

from __future__ import annotations

import math
import re

from difficulty.dataset_format import DatasetFormatError

__all__ = ["MAX_ABS_SCORE", "decode_lines", "parse_number", "refuse"]

MAX_ABS_SCORE = 1e9
"""No human score of the field comes near this (DA 0–100, MQM penalties, z-scores); a larger
number is a broken file, and would swamp any mean it entered."""
# Decimal numbers as the releases write them; Python's float() also takes "nan", "inf",
# "1_000" and surrounding spaces, none of which is a score.
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")


def refuse(path: str, line: int | None, reason: str) -> DatasetFormatError:
    where = f"{path}: line {line}" if line else path
    return DatasetFormatError([f"{where}: {reason}"])


def decode_lines(path: str, data: bytes) -> list[str]:
    """The lines of a UTF-8 file (a byte-order mark tolerated); a final line break ends the last
    line rather than starting an empty one. Refuses bad UTF-8 and NUL, naming the line."""
    nul = data.find(b"\x00")
    if nul >= 0:
        raise refuse(path, data.count(b"\n", 0, nul) + 1, "holds a NUL character")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise refuse(path, line, "is not valid UTF-8") from None
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def parse_number(text: str, path: str, line: int, what: str = "score") -> float:
    """A finite decimal number of at most :data:`MAX_ABS_SCORE` in magnitude."""
    if not _NUMBER.match(text):
        lowered = text.strip().lower()
        if lowered in {"nan", "+nan", "-nan"} or "inf" in lowered:
            raise refuse(path, line, f"{what} {text!r} is not a finite number")
        raise refuse(path, line, f"{what} {text!r} is not a number")
    value = float(text)
    if not math.isfinite(value) or abs(value) > MAX_ABS_SCORE:
        raise refuse(path, line, f"{what} {text} is out of range (at most ±{MAX_ABS_SCORE:g})")
    return value
