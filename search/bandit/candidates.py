"""Data structures that keep ``select`` from scanning every topic on every call.

- ``FreshArms``: never-pulled topics in the order of a seeded random permutation. Taking the next
  ones is the same in distribution as "Uniform({t : |t*| = 0})" (seed 000 Alg. 2-4) drawn without
  replacement, at O(batch) cost instead of an O(n_topics) scan.
- ``HotSet``: the exact top-b of a per-topic score over eligible topics, maintained as a small
  candidate set above a threshold. Only topics whose score may have risen are re-offered; a full
  pass (rebuild) happens only when the set runs dry or scores change globally.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from search.bandit.codec import decode_array, encode_array
from search.bandit.stats import ArmStats

__all__ = ["FreshArms", "HotSet", "top_by_score"]

ScoreFn = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
_EMPTY = np.empty(0, dtype=np.int64)


def top_by_score(topics: np.ndarray, scores: np.ndarray, b: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``b`` best (score desc, topic id asc): deterministic whatever the input order.

    Ties at the cut are all kept before the final sort, so the answer never depends on
    argpartition's arbitrary choice among equal scores; that is what lets a restored policy
    make the same selections as the original.
    """
    n = topics.shape[0]
    if b <= 0 or n == 0:
        return _EMPTY, np.empty(0)
    if b < n:
        kth = np.partition(scores, n - b)[n - b]
        keep = scores >= kth
        topics, scores = topics[keep], scores[keep]
    order = np.lexsort((topics, -scores))[:b]
    return topics[order], scores[order]


class FreshArms:
    """Untouched topics, drawn in the order of a permutation regenerated from ``seed``.

    The permutation is stored as int32 (4 bytes per topic) and built on first use.
    Topics whose pending pull was cancelled come back through ``give_back``.
    """

    def __init__(self, n_topics: int, seed: int) -> None:
        self.n_topics = n_topics
        self.seed = seed
        self.cursor = 0
        self.returned: np.ndarray = _EMPTY
        self._perm: np.ndarray | None = None

    @property
    def perm(self) -> np.ndarray:
        if self._perm is None:
            rng = np.random.default_rng(self.seed)
            self._perm = rng.permutation(self.n_topics).astype(np.int32)
        return self._perm

    @property
    def available(self) -> int:
        """Upper bound on topics still drawable (exact unless unsolicited updates happened)."""
        return self.n_topics - self.cursor + int(self.returned.shape[0])

    def draw(self, b: int, stats: ArmStats) -> np.ndarray:
        """Up to ``b`` distinct topics with no scored and no pending pull."""
        out: list[np.ndarray] = []
        need = b
        if self.returned.shape[0] and need > 0:
            back = self.returned[:need]
            self.returned = self.returned[need:]
            back = back[(stats.counts[back] == 0) & (stats.pending[back] == 0)]
            out.append(back)
            need -= back.shape[0]
        while need > 0 and self.cursor < self.n_topics:
            chunk = self.perm[self.cursor : self.cursor + need].astype(np.int64)
            self.cursor += chunk.shape[0]
            # Topics touched outside the permutation (unsolicited updates) are skipped.
            chunk = chunk[(stats.counts[chunk] == 0) & (stats.pending[chunk] == 0)]
            out.append(chunk)
            need -= chunk.shape[0]
        return np.concatenate(out) if out else _EMPTY

    def give_back(self, topics: np.ndarray, stats: ArmStats) -> None:
        untouched = topics[(stats.counts[topics] == 0) & (stats.pending[topics] == 0)]
        if untouched.shape[0]:
            self.returned = np.concatenate([self.returned, untouched.astype(np.int64)])

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "cursor": self.cursor, "returned": encode_array(self.returned)}

    @classmethod
    def from_dict(cls, n_topics: int, data: dict[str, Any]) -> FreshArms:
        fresh = cls(n_topics, int(data["seed"]))
        fresh.cursor = int(data["cursor"])
        fresh.returned = decode_array(data["returned"]).astype(np.int64)
        return fresh


class HotSet:
    """Exact top-b of ``score`` among eligible topics, without an O(n) pass per call.

    Invariant while valid: every eligible topic whose score is >= ``threshold`` is a member.
    Scores may only rise through ``offer`` (the owner re-offers every topic it touched) or
    globally, in which case the owner calls ``invalidate``. Members' scores are cached; a member
    is rescored only when marked dirty (offered again, or ``touch``-ed after a selection), and
    dropped once ineligible or below the threshold. The size of a rebuilt set,
    2 * sqrt(|universe| * b), balances the per-call scan of the set against how often the O(n)
    rebuild runs.
    """

    _OUT, _CLEAN, _DIRTY = 0, 1, 2

    def __init__(self, n_topics: int) -> None:
        # One byte per topic: out of the set, member with a valid cached score, or dirty member.
        self.state = np.zeros(n_topics, dtype=np.int8)
        self.threshold = np.inf
        self.valid = False
        self._size = 0
        self._universe_size = 0
        self._members = _EMPTY
        self._scores = np.empty(0)
        self._new: list[tuple[np.ndarray, np.ndarray]] = []

    def invalidate(self) -> None:
        self.valid = False

    def touch(self, topics: np.ndarray) -> None:
        """Scores of these topics may have changed (e.g. they became pending)."""
        if self.valid and topics.shape[0]:
            mark = topics[self.state[topics] == self._CLEAN]
            self.state[mark] = self._DIRTY

    def offer(self, topics: np.ndarray, scores: np.ndarray, eligible: np.ndarray) -> None:
        if not self.valid or topics.shape[0] == 0:
            return
        self.touch(topics)
        ok = eligible & (scores >= self.threshold) & (self.state[topics] == self._OUT)
        if ok.any():
            new, first = np.unique(topics[ok], return_index=True)
            self.state[new] = self._CLEAN
            self._new.append((new, scores[ok][first]))

    def top(
        self, b: int, score: ScoreFn, universe: Callable[[], np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top ``b`` eligible topics and their scores, best first (fewer if fewer exist)."""
        if not self.valid:
            self._rebuild(b, score, universe)
        self._refresh(score)
        # Too few: the threshold was too high. Too many: the universe outgrew the last rebuild.
        count = self._members.shape[0]
        if (count < b and self.threshold > -np.inf) or count > 4 * self._size:
            self._rebuild(b, score, universe)
            self._refresh(score)
        elif count > 4 * self._target(self._universe_size, b):
            self._shrink(self._target(self._universe_size, b))
        return top_by_score(self._members, self._scores, b)

    def _shrink(self, size: int) -> None:
        """The batch size dropped: raise the threshold within the set, O(set) not O(n).

        Non-members already score below the old threshold, so the invariant still holds.
        """
        cut = self._members.shape[0] - size
        self.threshold = max(self.threshold, float(np.partition(self._scores, cut)[cut]))
        keep = self._scores >= self.threshold
        self.state[self._members[~keep]] = self._OUT
        self._members, self._scores = self._members[keep], self._scores[keep]
        self._size = size

    def _refresh(self, score: ScoreFn) -> None:
        """Merge new members, rescore dirty ones, drop the ineligible and those below threshold."""
        if self._new:
            self._members = np.concatenate([self._members, *(m for m, _ in self._new)])
            self._scores = np.concatenate([self._scores, *(s for _, s in self._new)])
            self._new = []
        dirty = self.state[self._members] == self._DIRTY
        if not dirty.any():
            return
        topics = self._members[dirty]
        scores, eligible = score(topics)
        self._scores[dirty] = scores
        drop = np.zeros(self._members.shape[0], dtype=bool)
        drop[dirty] = ~(eligible & (scores >= self.threshold))
        self.state[topics] = self._CLEAN
        if drop.any():
            self.state[self._members[drop]] = self._OUT
            self._members = self._members[~drop]
            self._scores = self._scores[~drop]

    @staticmethod
    def _target(universe: int, b: int) -> int:
        return max(4 * b, 2 * int(np.sqrt(float(universe) * max(b, 1))), 64)

    def _rebuild(self, b: int, score: ScoreFn, universe: Callable[[], np.ndarray]) -> None:
        self.state[self._members] = self._OUT
        for members, _ in self._new:
            self.state[members] = self._OUT
        self._new = []
        topics = universe()
        scores, eligible = score(topics)
        topics, scores = topics[eligible], scores[eligible]
        size = self._target(topics.shape[0], b)
        self._size = size
        self._universe_size = topics.shape[0]
        if topics.shape[0] <= size:
            self.threshold = -np.inf
        else:
            cut = topics.shape[0] - size
            self.threshold = float(np.partition(scores, cut)[cut])
            keep = scores >= self.threshold
            topics, scores = topics[keep], scores[keep]
        self.state[topics] = self._CLEAN
        self._members, self._scores = topics, scores
        self.valid = True
