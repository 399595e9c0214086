"""Example sentence pairs per (concept, variation), bounded per variation.

A pair is an example of a variation when its source has the concept's word and its target has
exactly one of the concept's variations (a pair with two would not show which one the context
calls for). Kept per variation: the ``max_examples`` longest with fewer than ``token_limit``
source tokens (§3: rules are written from the 50 longest sentences under 50 tokens), ties
broken by the earlier pair, so the result does not depend on how the corpus was chunked.
"""

from __future__ import annotations

import heapq
import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from lexical.mining.text import Token

__all__ = ["Example", "ExampleCollector"]


@dataclass(frozen=True, order=True)
class Example:
    # Ordered for the heap: longer is better, then an earlier pair.
    src_tokens: int
    neg_pair: int
    src_start: int
    src_end: int
    tgt_start: int
    tgt_end: int

    @property
    def pair(self) -> int:
        return -self.neg_pair


class ExampleCollector:
    def __init__(
        self,
        concepts: dict[tuple[str, str], list[str]],
        *,
        max_examples: int,
        token_limit: int,
        pos_used: bool,
    ) -> None:
        self.concepts = concepts
        self.max_examples = max_examples
        self.token_limit = token_limit
        self.pos_used = pos_used
        self.heaps: dict[tuple[str, str, str], list[Example]] = {}

    def add(self, pair: int, src: Sequence[Token], tgt: Sequence[Token]) -> None:
        n_src = len(src)
        if n_src >= self.token_limit:
            return
        seen: set[tuple[str, str]] = set()
        for s in src:
            key = (s.lemma, s.pos if self.pos_used else "")
            if key in seen or key not in self.concepts:
                continue
            seen.add(key)
            variations = set(self.concepts[key])
            found = [t for t in tgt if t.lemma in variations]
            if not found or len({t.lemma for t in found}) != 1:
                continue
            target = found[0]
            slot = (key[0], key[1], target.lemma)
            example = Example(n_src, -pair, s.start, s.end, target.start, target.end)
            heap = self.heaps.setdefault(slot, [])
            if len(heap) < self.max_examples:
                heapq.heappush(heap, example)
            elif example > heap[0]:
                heapq.heapreplace(heap, example)

    def examples(self, lemma: str, pos: str, variation: str) -> list[Example]:
        """Longest first, then by pair."""
        return sorted(self.heaps.get((lemma, pos, variation), []), reverse=True)

    def to_bytes(self) -> bytes:
        rows = [
            [*slot, [[e.src_tokens, e.pair, e.src_start, e.src_end, e.tgt_start, e.tgt_end]
                     for e in heap]]
            for slot, heap in self.heaps.items()
        ]  # fmt: skip
        return zlib.compress(json.dumps(rows, ensure_ascii=False).encode("utf-8"), 6)

    def load_bytes(self, data: bytes) -> None:
        if not data:
            return
        for lemma, pos, variation, items in json.loads(zlib.decompress(data).decode("utf-8")):
            heap = [Example(n, -p, a, b, c, d) for n, p, a, b, c, d in items]
            heapq.heapify(heap)
            self.heaps[(lemma, pos, variation)] = heap
