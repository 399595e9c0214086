"""Parsing JSON from untrusted input strictly, so that what is stored is what was sent.

Python's ``json`` is lenient in ways that end as a server error or silent data loss later:
``NaN``/``Infinity`` are accepted (and break PostgreSQL's JSON and every JSON consumer), a
duplicate key silently keeps the last value (two sibling topics with one name become one),
``"\\ud800"`` decodes to a lone surrogate (no database can store it, nor PostgreSQL a NUL),
and deep nesting raises ``RecursionError`` in the parser or, worse, in whatever walks the value
afterwards. Every JSON
reader of user input (API bodies, imports, run configurations) goes through :func:`loads` or
:func:`check_value`, which turn each of these into a :class:`JSONInputError` that says where.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

# Deep enough for any real document here (topic trees are a handful of levels); shallow enough
# that recursive code walking the value (serializers, tree builders) never hits the stack limit.
MAX_DEPTH = 64


class JSONInputError(ValueError):
    """The input is not acceptable JSON; the message reads well after "not valid JSON: "."""


class JSONSyntaxError(JSONInputError):
    """Not JSON at all, at ``lineno``/``colno`` (1-based) of the text."""

    def __init__(self, msg: str, lineno: int, colno: int):
        self.msg, self.lineno, self.colno = msg, lineno, colno
        super().__init__(f"{msg} at line {lineno}, column {colno}")


def _constant(name: str) -> float:
    """NaN and Infinity parse, to be refused by :func:`check_value` with where they were."""
    return float(name)


def _number_name(number: float) -> str:
    return "NaN" if math.isnan(number) else "Infinity" if number > 0 else "-Infinity"


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise JSONInputError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _check_text(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise JSONInputError(f"text at {where} is not valid Unicode (a lone surrogate)") from None
    if "\x00" in text:  # PostgreSQL stores no NUL character, in text or in jsonb
        raise JSONInputError(f"text at {where} contains a NUL character")


def check_value(value: Any, *, max_depth: int = MAX_DEPTH) -> Any:
    """``value`` unchanged when it is storable JSON: finite numbers, valid Unicode text (no NUL),
    at most ``max_depth`` levels; otherwise :class:`JSONInputError` naming the path (``$.a[0]``).

    For values parsed elsewhere (a JSON body, a Python literal from a model's answer).
    Iterative, so a value too deep for recursion is refused rather than crashing the check.
    """
    stack: list[tuple[Any, str, int]] = [(value, "$", 1)]
    while stack:
        node, where, depth = stack.pop()
        if isinstance(node, dict | list) and depth > max_depth:
            # No path: it would be as long as the nesting itself.
            raise JSONInputError(f"nested more than {max_depth} levels deep")
        if isinstance(node, dict):
            for key, child in node.items():
                _check_text(str(key), where)
                stack.append((child, f"{where}.{key}", depth + 1))
        elif isinstance(node, list):
            stack.extend((child, f"{where}[{i}]", depth + 1) for i, child in enumerate(node))
        elif isinstance(node, str):
            _check_text(node, where)
        elif isinstance(node, float) and not math.isfinite(node):
            raise JSONInputError(f"{_number_name(node)} at {where} is not a JSON number")
    return value


def loads(text: str | bytes) -> Any:
    """Parse ``text`` strictly (bytes must be UTF-8; a byte-order mark before them is tolerated).

    Raises :class:`JSONInputError` for syntax errors (with line and column), ``NaN`` and
    ``Infinity``, duplicate keys, lone surrogates and nesting deeper than :data:`MAX_DEPTH`.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as exc:
            raise JSONInputError(f"not valid UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_constant, object_pairs_hook=_unique_keys)
    except JSONInputError:
        raise
    except json.JSONDecodeError as exc:
        raise JSONSyntaxError(exc.msg, exc.lineno, exc.colno) from None
    except RecursionError:
        raise JSONInputError(f"nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:  # an integer beyond the digit limit Python's int() sets
        raise JSONInputError(
            f"a number longer than {sys.get_int_max_str_digits()} digits"
        ) from None
    return check_value(value)
