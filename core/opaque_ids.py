"""Opaque numbers for database ids: a keyed permutation, so that the number shown for an id
says nothing about the id (its order, its neighbours, how many rows came before) to whoever
does not hold the key, and the id is read back from it without a lookup.

A balanced Feistel network (Luby and Rackoff, "How to construct pseudorandom permutations from
pseudorandom functions", SIAM J. Comput. 17(2), 1988) over :data:`ID_BITS`-bit integers:

1. split the id into two halves of ``ID_BITS / 2`` bits, ``left`` and ``right``;
2. for each round ``r``: ``left, right = right, left XOR F(key, r, right)``, where ``F`` is
   HMAC-SHA256 of the round number and the half, cut to a half's width (a pseudorandom
   function; four rounds already make the whole a strong pseudorandom permutation, six are used);
3. join the halves. Reading an opaque number back runs the rounds in reverse.

The opaque number is ``2**ID_BITS + permuted``: every opaque number has the same 16 decimal
digits and stays below ``2**53`` (a JSON number that JavaScript reads exactly), and an id is
never mistaken for one. Pure Python; the key is the caller's.
"""

from __future__ import annotations

import hashlib
import hmac

ID_BITS = 52
_HALF_BITS = ID_BITS // 2
_HALF_MASK = (1 << _HALF_BITS) - 1
_ROUNDS = 6
OPAQUE_MIN = 1 << ID_BITS
"""The smallest opaque number; the largest is ``2 * OPAQUE_MIN - 1``."""


def _round(key: bytes, number: int, half: int) -> int:
    digest = hmac.new(key, bytes([number]) + half.to_bytes(4, "big"), hashlib.sha256).digest()
    return int.from_bytes(digest[:4], "big") & _HALF_MASK


def to_opaque(identifier: int, key: bytes) -> int:
    """The opaque number of ``identifier`` (``0 <= identifier < 2**ID_BITS``)."""
    if not 0 <= identifier < OPAQUE_MIN:
        raise ValueError(f"an id must be between 0 and 2**{ID_BITS} - 1, got {identifier}")
    left, right = identifier >> _HALF_BITS, identifier & _HALF_MASK
    for number in range(_ROUNDS):
        left, right = right, left ^ _round(key, number, right)
    return OPAQUE_MIN + ((left << _HALF_BITS) | right)


def from_opaque(opaque: int, key: bytes) -> int | None:
    """The id whose opaque number is ``opaque``; ``None`` for a number that is not one."""
    if not OPAQUE_MIN <= opaque < 2 * OPAQUE_MIN:
        return None
    permuted = opaque - OPAQUE_MIN
    left, right = permuted >> _HALF_BITS, permuted & _HALF_MASK
    for number in reversed(range(_ROUNDS)):
        left, right = right ^ _round(key, number, left), left
    return (left << _HALF_BITS) | right
