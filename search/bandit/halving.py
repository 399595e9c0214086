"""Sequential Halving for fixed-budget top-k identification (Karnin, Koren & Somekh, 2013).

Adapted to topic sets far larger than the budget: the arms are a uniformly random subset of
``subset`` topics, by default the largest m with m * ceil(log_eta(m / k)) <= budget, so that
the first round still gives every arm one pull. For top-k the halving keeps at least k
survivors (Bubeck, Wang & Viswanathan, 2013, "multiple identifications").
"""

from __future__ import annotations

import math
from typing import Any, Unpack

import numpy as np

from search.bandit.base import Policy, PolicyOptions
from search.bandit.candidates import FreshArms, top_by_score
from search.bandit.codec import decode_array, encode_array

__all__ = ["SequentialHalving", "default_subset"]

_EMPTY = np.empty(0, dtype=np.int64)


def _rounds(m: int, k: int, eta: float) -> int:
    return max(1, math.ceil(math.log(max(m / k, 1.0), eta) - 1e-9))


def default_subset(n_topics: int, k: int, budget: int, eta: float = 2.0) -> int:
    """Largest m <= n_topics with m * rounds(m) <= budget (at least k), by bisection."""
    lo, hi = k, n_topics
    if hi * _rounds(hi, k, eta) <= budget:
        return hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid * _rounds(mid, k, eta) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return max(lo, k)


class SequentialHalving(Policy):
    """Sequential Halving with a budget-sized random subset (Karnin et al., 2013, Alg. 1).

    1. Draw S_0: ``subset`` topics uniformly at random; R = ceil(log_eta(|S_0| / k)) rounds.
    2. Round r: split the budget not yet spent evenly over the R - r rounds left and give each
       survivor floor(share / |S_r|) pulls (at least one), interleaved arm by arm.
    3. When every pull of the round is scored, keep the max(k, ceil(|S_r| / eta)) survivors
       with the highest cumulative mean (all rounds' pulls, not just this round's: more data
       per decision than the original, same schedule).
    4. After the last round, any leftover budget goes to the final k survivors.

    Pending pulls: a round ends only when all its pulls are scored; until then ``select``
    returns what is left of the round's schedule, then nothing.
    """

    name = "sequential_halving"

    def __init__(
        self,
        n_topics: int,
        k: int,
        rng: np.random.Generator,
        *,
        eta: float = 2.0,
        subset: int | None = None,
        explore: float | None = None,
        **options: Unpack[PolicyOptions],
    ) -> None:
        budget = options.get("budget")
        if budget is None:
            raise ValueError("sequential_halving needs a budget")
        if eta <= 1.0:
            raise ValueError("eta must be greater than 1")
        super().__init__(n_topics, k, rng, **options)
        self.eta = float(eta)
        if explore is not None:
            if not 0.0 < explore <= 1.0:
                raise ValueError("explore must be in (0, 1]")
            subset = max(min(int(explore * budget), n_topics), k)
        m = default_subset(n_topics, k, budget, eta) if subset is None else int(subset)
        if not k <= m <= n_topics:
            raise ValueError("subset must be in [k, n_topics]")
        self.subset = m
        self.n_rounds = _rounds(m, k, self.eta)
        self.round = -1
        self.survivors = _EMPTY
        self.per_arm = 0
        self.cursor = 0
        self.scheduled = 0
        self.fresh = FreshArms(self.n_topics, int(self.rng.integers(2**63)))

    def params(self) -> dict[str, Any]:
        return {**super().params(), "eta": self.eta, "subset": self.subset}

    def _choose(self, b: int) -> np.ndarray:
        picked: list[np.ndarray] = []
        need = b
        while need > 0:
            # A round ends only once all its pulls, including this call's, are scored.
            round_over = self.cursor >= self.scheduled
            if round_over and (self.stats.n_pending or picked or not self._next_round()):
                break
            take = min(need, self.scheduled - self.cursor)
            positions = np.arange(self.cursor, self.cursor + take)
            picked.append(self.survivors[positions % self.survivors.shape[0]])
            self.cursor += take
            need -= take
        return np.concatenate(picked) if picked else _EMPTY

    def _next_round(self) -> bool:
        """Eliminate, then schedule the next round; False when nothing is left to schedule."""
        left = self.remaining() or 0
        if left == 0:
            return False
        r = self.round + 1
        if r == 0:
            self.survivors = np.sort(self.fresh.draw(self.subset, self.stats))
        else:
            keep = max(self.k, math.ceil(self.survivors.shape[0] / self.eta))
            counts = np.maximum(self.stats.counts[self.survivors], 1)
            means = self.stats.sums[self.survivors] / counts
            self.survivors = np.sort(top_by_score(self.survivors, means, keep)[0])
        n_arms = max(self.survivors.shape[0], 1)
        share = left // (self.n_rounds - r) if r < self.n_rounds else left
        per_arm = max(share // n_arms, 1)
        if self.cap is not None:
            most = int(self.stats.counts[self.survivors].max(initial=0))
            per_arm = min(per_arm, max(self.cap - most, 0))
        self.round = r
        self.per_arm = per_arm
        self.cursor = 0
        self.scheduled = min(per_arm * self.survivors.shape[0], left)
        return self.scheduled > 0

    def _recommend_pool(self) -> np.ndarray:
        if self.survivors.shape[0] == 0:
            return super()._recommend_pool()
        return self.survivors[self.stats.counts[self.survivors] > 0]

    def _state_to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "n_rounds": self.n_rounds,
            # Sorted ids: their gaps compress to about a byte each.
            "survivor_gaps": encode_array(np.diff(self.survivors, prepend=0)),
            "per_arm": self.per_arm,
            "cursor": self.cursor,
            "scheduled": self.scheduled,
            "fresh": self.fresh.to_dict(),
        }

    def _state_from_dict(self, data: dict[str, Any]) -> None:
        self.round = int(data["round"])
        self.n_rounds = int(data["n_rounds"])
        self.survivors = np.cumsum(decode_array(data["survivor_gaps"])).astype(np.int64)
        self.per_arm = int(data["per_arm"])
        self.cursor = int(data["cursor"])
        self.scheduled = int(data["scheduled"])
        self.fresh = FreshArms.from_dict(self.n_topics, data["fresh"])
