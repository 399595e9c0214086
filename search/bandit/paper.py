"""The search methods of seed 000 §2.2, batched ("choose top-b topics at once").

- ``Brute`` (Alg. 2): uniform over topics with |t*| < c.
- ``Greedy`` (Alg. 3): pull every topic once, then the highest observed mean with |t*| < c.
- ``EpsilonGreedy`` (Alg. 4): with probability epsilon a never-pulled topic, else as greedy.

Batching (seed 000 §2.2, last paragraph): one call returns ``b`` distinct topics. For
epsilon-greedy the number of exploration slots in a batch is Binomial(b, epsilon), the batched
equivalent of b independent coin flips.
"""

from __future__ import annotations

from typing import Any, Unpack

import numpy as np

from search.bandit.base import IndexPolicy, Policy, PolicyOptions

__all__ = ["Brute", "EpsilonGreedy", "Greedy"]

_EMPTY = np.empty(0, dtype=np.int64)
# Rejection sampling for brute gives up after this many rounds and scans instead.
_BRUTE_TRIES = 6


class Brute(Policy):
    """Seed 000 Alg. 2: BruteChoose(T, c) = Uniform({t : |t*| < c}).

    Sampling is by rejection, sized by the acceptance rate seen (O(b / acceptance)), with an
    O(n) scan only when under ~1 % of the topics remain eligible.
    """

    name = "brute"

    def _eligible(self, topics: np.ndarray) -> np.ndarray:
        if self.cap is None:
            return np.ones(topics.shape[0], dtype=bool)
        eligible: np.ndarray = (self.stats.counts[topics] + self.stats.pending[topics]) < self.cap
        return eligible

    def _choose(self, b: int) -> np.ndarray:
        picked = _EMPTY
        acceptance = 1.0
        for _ in range(_BRUTE_TRIES):
            # Draw enough candidates for the acceptance rate seen so far (capped topics are
            # rejected), so a late, mostly-capped run still needs about one round.
            size = int(1.25 * (b - picked.shape[0]) / max(acceptance, 0.01)) + 16
            draw = self.rng.integers(0, self.n_topics, size=size)
            ok = self._eligible(draw)
            acceptance = max(float(ok.mean()), 1e-3)
            picked = _first_unique(np.concatenate([picked, draw[ok]]))
            if picked.shape[0] >= b:
                return picked[:b]
        pool = np.flatnonzero(self._eligible(np.arange(self.n_topics)))
        pool = np.setdiff1d(pool, picked, assume_unique=True)
        extra = self.rng.choice(pool, size=min(b - picked.shape[0], pool.shape[0]), replace=False)
        return np.concatenate([picked, extra.astype(np.int64)])


class Greedy(IndexPolicy):
    """Seed 000 Alg. 3: explore every topic once, then exploit argmax mean with |t*| < c."""

    name = "greedy"
    default_cap = 10

    def _choose(self, b: int) -> np.ndarray:
        picked = self.fresh.draw(b, self.stats)
        if picked.shape[0] < b:
            picked = np.concatenate([picked, self._exploit(b - picked.shape[0])])
        return picked

    def _exploit(self, b: int) -> np.ndarray:
        """Top-b observed means among pulled topics below the cap (Alg. 3 line 5)."""
        return self.hot.top(b, self._score, self._universe)[0]

    def _score(self, topics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        counts = self.stats.counts[topics]
        eligible = counts > 0
        if self.cap is not None:
            eligible &= (counts + self.stats.pending[topics]) < self.cap
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = self.stats.sums[topics] / counts
        return scores, eligible

    def _state_to_dict(self) -> dict[str, Any]:
        return self._fresh_to_dict()

    def _state_from_dict(self, data: dict[str, Any]) -> None:
        self._fresh_from_dict(data)


class EpsilonGreedy(Greedy):
    """Seed 000 Alg. 4: explore a never-pulled topic with probability epsilon, else exploit."""

    name = "epsilon_greedy"

    def __init__(
        self,
        n_topics: int,
        k: int,
        rng: np.random.Generator,
        *,
        epsilon: float = 0.7,
        **options: Unpack[PolicyOptions],
    ) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError("epsilon must be in [0, 1]")
        super().__init__(n_topics, k, rng, **options)
        self.epsilon = float(epsilon)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "epsilon": self.epsilon}

    def _choose(self, b: int) -> np.ndarray:
        n_explore = int(self.rng.binomial(b, self.epsilon))
        explored = self.fresh.draw(n_explore, self.stats) if n_explore else _EMPTY
        exploited = self._exploit(b - explored.shape[0])
        picked = np.concatenate([explored, exploited])
        if picked.shape[0] < b:
            # Nothing (more) to exploit yet: Alg. 4 falls through to exploration.
            picked = np.concatenate([picked, self.fresh.draw(b - picked.shape[0], self.stats)])
        return picked


def _first_unique(values: np.ndarray) -> np.ndarray:
    """Unique values in order of first appearance."""
    _, first = np.unique(values, return_index=True)
    return values[np.sort(first)]
