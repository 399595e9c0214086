"""The one-to-many map source (lemma, POS) → target lemma, as link counts (App. B.1), plus the
surface forms each target lemma was seen aligned in. Its size follows the vocabularies, not the
number of pairs; it round-trips through compact bytes so a job can keep it between rounds."""

from __future__ import annotations

import json
import zlib
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["MiningCounts"]


@dataclass
class MiningCounts:
    # (source lemma, source POS, target lemma) → aligned occurrences.
    links: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    # (target lemma, lowercased surface form) → aligned occurrences.
    surfaces: Counter[tuple[str, str]] = field(default_factory=Counter)
    pairs_read: int = 0
    pairs_aligned: int = 0  # pairs with at least one token on each side

    def surface_forms(self, target: str) -> list[tuple[str, int]]:
        """Forms of a target lemma, most frequent first (ties alphabetically)."""
        forms = [(form, n) for (lemma, form), n in self.surfaces.items() if lemma == target]
        return sorted(forms, key=lambda item: (-item[1], item[0]))

    def surface_index(self) -> dict[str, list[tuple[str, int]]]:
        """Every target lemma's forms, most frequent first, in one pass."""
        index: dict[str, list[tuple[str, int]]] = {}
        for (lemma, form), n in self.surfaces.items():
            index.setdefault(lemma, []).append((form, n))
        for forms in index.values():
            forms.sort(key=lambda item: (-item[1], item[0]))
        return index

    def to_bytes(self) -> bytes:
        payload = {
            "links": [[s, p, t, n] for (s, p, t), n in self.links.items()],
            "surfaces": [[t, f, n] for (t, f), n in self.surfaces.items()],
            "pairs_read": self.pairs_read,
            "pairs_aligned": self.pairs_aligned,
        }
        return zlib.compress(json.dumps(payload, ensure_ascii=False).encode("utf-8"), 6)

    @classmethod
    def from_bytes(cls, data: bytes) -> MiningCounts:
        if not data:
            return cls()
        payload = json.loads(zlib.decompress(data).decode("utf-8"))
        return cls(
            links=Counter({(s, p, t): n for s, p, t, n in payload["links"]}),
            surfaces=Counter({(t, f): n for t, f, n in payload["surfaces"]}),
            pairs_read=payload["pairs_read"],
            pairs_aligned=payload["pairs_aligned"],
        )
