"""Per-annotator item order: a seeded permutation the database can sort by (pure Python).

Seed 004 §2.3 shuffles the order in which items are shown to each annotator. The claim query
(``services.claims._claim_open_item``) must stay one locking statement, so the permutation is not a
stored list but a rank computed in SQL from the item id and the annotator's seed, with only
``%``, ``*`` and XOR, which SQLite (Django's ``BITXOR``) and PostgreSQL (``#``) both have:

1. ``x = (id mod P) XOR s1``;  2. ``x = (x · a) mod P``;  3. ``x = (x XOR s2) · b mod P``,

with P = 2³¹ − 1 (prime) and (s1, a, s2, b) drawn from the seed. Every intermediate value stays
below 2⁶² — no 64-bit overflow, which PostgreSQL would refuse and SQLite would turn into a
float. The XOR between the two multiplications makes the map non-affine, so different seeds
give orders that are not rotations of each other. Equal ranks (possible, the map is not a
bijection) fall back to position, then id, as the unshuffled order does.

:func:`item_rank` is the same function in Python: exports and tests rebuild an annotator's
order from the stored seed without the database.
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Iterable

PRIME = 2**31 - 1
SEED_BITS = 62


def annotator_seed(campaign_seed: int, annotator_id: int) -> int:
    """The seed of one annotator's order in one campaign: a hash of both, 62 bits."""
    digest = hashlib.sha256(f"hardset-item-order:{campaign_seed}:{annotator_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


@functools.lru_cache(maxsize=4096)
def hash_params(seed: int) -> tuple[int, int, int, int]:
    """(s1, a, s2, b) of the rank function for ``seed``: XOR masks below 2³¹, multipliers in
    [1, P − 1] (never 0, which would give every item the same rank)."""
    rng = random.Random(seed)
    return (
        rng.randrange(2**31),
        rng.randrange(1, PRIME),
        rng.randrange(2**31),
        rng.randrange(1, PRIME),
    )


def item_rank(item_id: int, seed: int) -> int:
    """The item's place key in the order of the annotator with ``seed`` (lower comes first)."""
    s1, a, s2, b = hash_params(seed)
    x = ((item_id % PRIME) ^ s1) * a % PRIME
    return ((x ^ s2) * b) % PRIME


def ordered(items: Iterable[tuple[int, int]], seed: int | None) -> list[int]:
    """Item ids of ``(id, position)`` pairs in the annotator's order (position order when
    ``seed`` is None), exactly as the claim query sorts them."""
    pairs = list(items)
    if seed is None:
        return [item_id for item_id, position in sorted(pairs, key=lambda p: (p[1], p[0]))]
    return [
        item_id
        for item_id, position in sorted(pairs, key=lambda p: (item_rank(p[0], seed), p[1], p[0]))
    ]
