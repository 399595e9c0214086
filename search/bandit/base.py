"""The policy interface shared by every search method (seed 000 Alg. 1).

A policy is a state machine driven by the caller:

    while not policy.done:
        topics = policy.select(batch_size)   # may be empty while scores are pending
        ... draw one text per topic, estimate its difficulty (maybe hours later) ...
        policy.update(topics, difficulties)
    best = policy.top_k()

Pending pulls (selected, not yet scored) count against the budget and the cap, so ``select`` may
be called again before ``update`` without over-selecting an arm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypedDict, Unpack

import numpy as np

from search.bandit.candidates import FreshArms, HotSet, top_by_score
from search.bandit.codec import decode_rng, encode_rng
from search.bandit.prior import PriorKind, PriorModel, fit_prior
from search.bandit.stats import ArmStats

__all__ = ["Estimates", "IndexPolicy", "Policy", "PolicyOptions", "Recommend"]

Recommend = Literal["empirical", "posterior"]
_EMPTY = np.empty(0, dtype=np.int64)
_Z95 = 1.959963984540054


class PolicyOptions(TypedDict, total=False):
    """The keyword arguments of every method: the budget in pulls (None: unbounded), the most
    pulls per topic (None: no cap), what ``top_k`` ranks by, the per-text noise sd when known
    and the empirical-Bayes prior's kind."""

    budget: int | None
    cap: int | None
    recommend: Recommend
    noise_sd: float | None
    prior: PriorKind


@dataclass(frozen=True)
class Estimates:
    """Per-topic estimates for ``topics`` (arrays aligned with it).

    ``mean`` is the empirical mean (NaN when never scored). ``posterior_mean``, ``lower`` and
    ``upper`` come from the empirical-Bayes normal posterior (95 % credible interval); they are
    NaN until the prior can be estimated.
    """

    topics: np.ndarray
    count: np.ndarray
    pending: np.ndarray
    mean: np.ndarray
    posterior_mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


class Policy:
    """Base class: bookkeeping, budget, pending pulls, recommendation and persistence.

    Subclasses implement ``_choose`` and may hook ``_before_record`` / ``_observe`` and the
    state (de)serialization.
    """

    name: ClassVar[str] = ""
    # What the method assumes when its run names no cap or recommendation.
    default_cap: ClassVar[int | None] = None
    default_recommend: ClassVar[Recommend] = "empirical"

    def __init__(
        self, n_topics: int, k: int, rng: np.random.Generator, **options: Unpack[PolicyOptions]
    ) -> None:
        unknown = set(options) - PolicyOptions.__optional_keys__
        if unknown:  # a method's own parameters are named in its signature; others are typos
            raise TypeError(f"unexpected parameter(s): {', '.join(sorted(unknown))}")
        budget = options.get("budget")
        cap = options.get("cap", self.default_cap)
        recommend = options.get("recommend", self.default_recommend)
        noise_sd = options.get("noise_sd")
        prior = options.get("prior", "grid")
        if n_topics < 1:
            raise ValueError("n_topics must be positive")
        if not 1 <= k <= n_topics:
            raise ValueError("k must be in [1, n_topics]")
        if budget is not None and budget < 0:
            raise ValueError("budget must be non-negative")
        if cap is not None and cap < 1:
            raise ValueError("cap must be at least 1")
        if recommend not in ("empirical", "posterior"):
            raise ValueError("recommend must be 'empirical' or 'posterior'")
        if prior not in ("grid", "normal"):
            raise ValueError("prior must be 'grid' or 'normal'")
        self.n_topics = int(n_topics)
        self.k = int(k)
        self.rng = rng
        self.budget = None if budget is None else int(budget)
        self.cap = None if cap is None else int(cap)
        self.recommend: Recommend = recommend
        self.noise_sd = None if noise_sd is None else float(noise_sd)
        self.prior_kind: PriorKind = prior
        self._prior_cache: tuple[int, PriorModel | None] = (-1, None)
        self.stats = ArmStats.zeros(self.n_topics)
        self._exhausted = False

    # -- driving -------------------------------------------------------------------------------

    def select(self, batch_size: int) -> np.ndarray:
        """Topic indices to pull next (int64, at most ``batch_size``, maybe with repeats).

        Empty when the budget is spent, when nothing is eligible, or when the method waits for
        pending scores (e.g. the end of a halving round).
        """
        if batch_size < 1:
            raise ValueError("batch_size must be positive")
        b = batch_size
        left = self.remaining()
        if left is not None:
            b = min(b, left)
        if b <= 0:
            return _EMPTY
        topics = np.asarray(self._choose(b), dtype=np.int64)[:b]
        self._exhausted = topics.shape[0] == 0 and self.stats.n_pending == 0
        if topics.shape[0]:
            self.stats.reserve(topics)
            self._after_reserve(topics)
        return topics

    def update(self, topics: np.ndarray, difficulties: np.ndarray) -> None:
        """Record scored pulls (pending or unsolicited; repeats allowed)."""
        idx = np.asarray(topics, dtype=np.int64).ravel()
        values = np.asarray(difficulties, dtype=np.float64).ravel()
        if idx.shape != values.shape:
            raise ValueError("topics and difficulties must have the same length")
        if idx.shape[0] == 0:
            return
        self._check_topics(idx)
        if not np.isfinite(values).all():
            raise ValueError("difficulties must be finite")
        self._before_record(np.unique(idx))
        touched = self.stats.record(idx, values)
        self._exhausted = False
        self._observe(touched)

    def revise(self, topics: np.ndarray, old: np.ndarray, new: np.ndarray) -> None:
        """Replace recorded scores: each pull of ``topics[i]`` scored ``old[i]`` now counts as
        ``new[i]`` (a human score replacing the automatic one, or a recalibrated estimate).

        Counts, pending pulls and the budget are unchanged; the caller guarantees that each
        ``(topic, old)`` was recorded by ``update`` (or an earlier ``revise``).
        """
        idx = np.asarray(topics, dtype=np.int64).ravel()
        before = np.asarray(old, dtype=np.float64).ravel()
        after = np.asarray(new, dtype=np.float64).ravel()
        if not idx.shape == before.shape == after.shape:
            raise ValueError("topics, old and new must have the same length")
        if idx.shape[0] == 0:
            return
        self._check_topics(idx)
        if not (np.isfinite(before).all() and np.isfinite(after).all()):
            raise ValueError("difficulties must be finite")
        if (self.stats.counts[idx] == 0).any():
            raise ValueError("only scored pulls can be revised")
        self._before_record(np.unique(idx))
        touched = self.stats.revise(idx, before, after)
        self._prior_cache = (-1, None)  # keyed by the number of scores, which did not change
        self._observe(touched)

    def cancel(self, topics: np.ndarray) -> None:
        """Release pending pulls that will never be scored (e.g. a permanent engine error)."""
        idx = np.asarray(topics, dtype=np.int64).ravel()
        if idx.shape[0] == 0:
            return
        self._check_topics(idx)
        touched = self.stats.release(idx)
        self._exhausted = False
        self._after_release(touched)
        self._observe(touched)

    def remaining(self) -> int | None:
        """Pulls that may still be selected (None without a budget)."""
        if self.budget is None:
            return None
        return max(self.budget - self.stats.n_scored - self.stats.n_pending, 0)

    @property
    def done(self) -> bool:
        """True when no pull is pending and no further pull can be selected."""
        if self.stats.n_pending:
            return False
        return self.remaining() == 0 or self._exhausted

    # -- results -------------------------------------------------------------------------------

    def prior(self) -> PriorModel | None:
        """The empirical-Bayes prior fitted to the current data (see ``fit_prior``)."""
        seen, cached = self._prior_cache
        if seen != self.stats.n_scored:
            cached = fit_prior(self.stats, self.prior_kind, self.noise_sd)
            self._prior_cache = (self.stats.n_scored, cached)
        return cached

    def top_k(self) -> np.ndarray:
        """The ``k`` recommended topics, best first (fewer if fewer were scored)."""
        return top_by_score(*self.ranking(), self.k)[0]

    def ranking(self) -> tuple[np.ndarray, np.ndarray]:
        """The topics the recommendation chooses from and the scores ``top_k`` ranks them by."""
        topics = self._recommend_pool()
        return topics, self._recommend_scores(topics)

    def estimates(self, topics: np.ndarray | None = None) -> Estimates:
        """Estimates for ``topics`` (all topics when None; cost is linear in their number)."""
        idx = (
            np.arange(self.n_topics, dtype=np.int64)
            if topics is None
            else np.asarray(topics, dtype=np.int64).ravel()
        )
        self._check_topics(idx)
        counts = self.stats.counts[idx]
        sums = self.stats.sums[idx]
        nan = np.full(idx.shape[0], np.nan)
        post, lower, upper = nan, nan, nan
        prior = self.prior()
        if prior is not None:
            post, var = prior.posterior(counts, sums)
            half = _Z95 * np.sqrt(var)
            lower, upper = post - half, post + half
        return Estimates(
            topics=idx,
            count=counts.copy(),
            pending=self.stats.pending[idx].copy(),
            mean=self.stats.means(idx),
            posterior_mean=post,
            lower=lower,
            upper=upper,
        )

    # -- persistence ---------------------------------------------------------------------------

    def params(self) -> dict[str, Any]:
        """Constructor keyword arguments, JSON-able."""
        return {
            "budget": self.budget,
            "cap": self.cap,
            "recommend": self.recommend,
            "noise_sd": self.noise_sd,
            "prior": self.prior_kind,
        }

    def to_dict(self) -> dict[str, Any]:
        """Compact JSON-able state; ``search.bandit.policy_from_dict`` restores it exactly."""
        return self._to_dict(self.stats.to_dict())

    def _to_dict(self, stats: dict[str, Any]) -> dict[str, Any]:
        return {
            "policy": self.name,
            "version": 1,
            "n_topics": self.n_topics,
            "k": self.k,
            "params": self.params(),
            "rng": encode_rng(self.rng),
            "stats": stats,
            "exhausted": self._exhausted,
            "state": self._state_to_dict(),
        }

    def header_to_dict(self) -> dict[str, Any]:
        """``to_dict`` without the per-topic statistics: their totals only (``"stats"`` has no
        arrays). With the rows of ``stats.take_changes`` saved after every change, it restores
        the policy through ``search.bandit.policy_from_parts``; it costs O(1) in the number of
        topics pulled so far (the method's own state aside, e.g. halving's survivors)."""
        return {**self._to_dict(self.stats.totals_to_dict()), "stats_rows": "changes"}

    @classmethod
    def restore_params(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Constructor arguments that live outside ``params`` (e.g. neighbour lists)."""
        return {}

    def _load(self, data: dict[str, Any], stats: ArmStats | None = None) -> None:
        self.rng = decode_rng(data["rng"])
        self.stats = ArmStats.from_dict(data["stats"]) if stats is None else stats
        self._prior_cache = (-1, None)
        self._exhausted = bool(data["exhausted"])
        self._state_from_dict(data["state"])

    # -- hooks ---------------------------------------------------------------------------------

    def _choose(self, b: int) -> np.ndarray:
        raise NotImplementedError

    def _after_reserve(self, topics: np.ndarray) -> None:
        """Called after ``topics`` were marked pending."""

    def _after_release(self, topics: np.ndarray) -> None:
        """Called after pending pulls of ``topics`` were cancelled."""

    def _before_record(self, topics: np.ndarray) -> None:
        """Called with the unique topics of an update, before the statistics change."""

    def _observe(self, topics: np.ndarray) -> None:
        """Called with the unique topics whose statistics or pending counts changed."""

    def _state_to_dict(self) -> dict[str, Any]:
        return {}

    def _state_from_dict(self, data: dict[str, Any]) -> None:
        """Restore what ``_state_to_dict`` wrote."""

    def _recommend_pool(self) -> np.ndarray:
        return np.flatnonzero(self.stats.counts > 0)

    def _recommend_scores(self, topics: np.ndarray) -> np.ndarray:
        return self.score_of(self.stats.counts[topics], self.stats.sums[topics])

    def score_of(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        """What the recommendation ranks a topic by, given its pulls' count and sum: the raw
        mean (seed 000 Alg. 1 line 7) or the empirical-Bayes posterior mean."""
        prior = self.prior() if self.recommend == "posterior" else None
        if prior is None:
            means: np.ndarray = sums / counts
            return means
        return prior.posterior(counts, sums)[0]

    def _check_topics(self, idx: np.ndarray) -> None:
        if idx.shape[0] and (idx.min() < 0 or idx.max() >= self.n_topics):
            raise IndexError("topic index out of range")


class IndexPolicy(Policy):
    """A method that draws never-pulled topics from a random permutation (``FreshArms``) and
    exploits the best index among pulled ones, kept in a ``HotSet``: greedy, epsilon-greedy,
    contextual and EB-UCB. Subclasses give ``_score`` (index and eligibility per topic)."""

    def __init__(
        self, n_topics: int, k: int, rng: np.random.Generator, **options: Unpack[PolicyOptions]
    ) -> None:
        super().__init__(n_topics, k, rng, **options)
        self.fresh = FreshArms(self.n_topics, int(self.rng.integers(2**63)))
        self.hot = HotSet(self.n_topics)

    def _score(self, topics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _universe(self) -> np.ndarray:
        """Every topic that may have an index (the hot set's fallback scan)."""
        return np.flatnonzero(self.stats.counts > 0)

    def _observe(self, topics: np.ndarray) -> None:
        scores, eligible = self._score(topics)
        self.hot.offer(topics, scores, eligible)

    def _after_reserve(self, topics: np.ndarray) -> None:
        self.hot.touch(topics)

    def _after_release(self, topics: np.ndarray) -> None:
        self.fresh.give_back(topics, self.stats)

    def _fresh_to_dict(self) -> dict[str, Any]:
        return {"fresh": self.fresh.to_dict()}

    def _fresh_from_dict(self, data: dict[str, Any]) -> None:
        """Restore the permutation; the hot set is rebuilt lazily from the statistics."""
        self.fresh = FreshArms.from_dict(self.n_topics, data["fresh"])
        self.hot = HotSet(self.n_topics)
