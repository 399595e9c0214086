"""Human checks where they can change the decision: the human loop's "boundary" rule (issue 42).

A search decides one thing, its top-k topics. A human check replaces a text's automatic (QE)
difficulty by a human one, so it can change the decision only for a topic whose score could
cross the top-k boundary once its still unchecked texts move by the human–QE gap. The gap is
learned from the pairs judged so far, as a random-effects model: gap = mean + b_topic + e_text
(a QE blind spot shared by a topic's texts, and each text's own noise).

1. ``learn_gap``: the mean, the total variance (both shrunk towards 0 and ``PRIOR_SD``² by
   ``PRIOR_N`` pseudo-pairs, so the first judgments cannot declare QE perfect), the pooled
   within-topic variance of topics judged twice or more (until it has ``PRIOR_N`` degrees of
   freedom, half the total is assumed) and the between-topic variance (the rest, at least
   5 % of the total).
2. A topic with c judged pairs of mean gap ḡ has its own gap ĝ = mean + w·(ḡ − mean), w =
   c·τ² / (c·τ² + σw²), uncertain by τ²·(1 − w). Its u unchecked texts would move its sum by
   u·ĝ, with sd √(u²·τ²·(1 − w) + u·σw²).
3. The boundary b is the midpoint between the k-th and (k+1)-th score of the ranking the
   recommendation uses. A topic is in play when its score with the sum moved to the far end
   (± z sd) lies across b from its score now: a topic in the top-k whose low end falls below b,
   one outside whose high end rises above it. Scores follow the policy's own rule (raw or
   shrunk mean), so a topic whose estimate barely follows its data (one noisy pull under heavy
   shrinkage) is rightly seen to move little.
4. In-play topics are ordered by the margin (score at the centre − b, signed towards the
   topic's side now) / (high − low): a topic expected to cross comes first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from search.bandit.base import Policy

__all__ = [
    "PRIOR_N",
    "PRIOR_SD",
    "Evidence",
    "Gap",
    "Z",
    "boundary_topics",
    "learn_gap",
    "topics_to_check",
]

# Before any judgment the gap is taken to be as wide as one text's noise in seed 000's world
# (sd 15 on the 0-100 difficulty scale); five pseudo-pairs keep it wide for the first few.
PRIOR_SD = 15.0
PRIOR_N = 5.0
Z = 2.0  # a two-sided ~95 % band for the gap
_MIN_BETWEEN = 0.05

Score = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Gap:
    """The human − automatic difficulty gap: shrunk mean, between-topic and within-topic
    variance, and the number of judged pairs behind them."""

    mean: float
    between: float
    within: float
    n: int


@dataclass(frozen=True)
class Evidence:
    """Per ranked topic (aligned arrays): scored pulls, their sum, pulls sent to humans
    (answered or not), judged pairs and the sum of their gaps."""

    topics: np.ndarray
    counts: np.ndarray
    sums: np.ndarray
    checked: np.ndarray
    pairs: np.ndarray
    gap_sums: np.ndarray


def learn_gap(
    automatic: np.ndarray,
    human: np.ndarray,
    topics: np.ndarray,
    *,
    prior_sd: float = PRIOR_SD,
    prior_n: float = PRIOR_N,
) -> Gap:
    """Step 1: the gap of the judged pairs (one per text, ``topics`` says whose)."""
    gap = np.asarray(human, dtype=np.float64) - np.asarray(automatic, dtype=np.float64)
    n = int(gap.shape[0])
    mean = float(gap.sum() / (n + prior_n))
    total = (prior_n * prior_sd**2 + float(((gap - mean) ** 2).sum())) / (n + prior_n)
    within_ss, within_dof = _within(gap, np.asarray(topics, dtype=np.int64))
    within = (prior_n * 0.5 * total + within_ss) / (prior_n + within_dof)
    within = min(within, total)
    between = max(total - within, _MIN_BETWEEN * total)
    return Gap(mean, between, within, n)


def _within(gap: np.ndarray, topics: np.ndarray) -> tuple[float, int]:
    """Sum of squares of each topic's gaps around its own mean, and its degrees of freedom."""
    if gap.shape[0] == 0:
        return 0.0, 0
    _, group, sizes = np.unique(topics, return_inverse=True, return_counts=True)
    means = np.bincount(group, weights=gap) / sizes
    return float(((gap - means[group]) ** 2).sum()), int(gap.shape[0] - sizes.shape[0])


def boundary_topics(evidence: Evidence, k: int, gap: Gap, score: Score, z: float = Z) -> np.ndarray:
    """Steps 2-4: the topics whose checks can still move them across the top-k boundary,
    closest first; nothing is in play while at most k topics are ranked. ``score(counts,
    sums)`` is the recommendation's scoring rule (``Policy.score_of``)."""
    e = evidence
    if e.topics.shape[0] <= k:
        return np.empty(0, dtype=np.int64)
    counts = np.asarray(e.counts, dtype=np.float64)
    current = score(e.counts, e.sums)
    ranked = -np.partition(-current, [k - 1, k])
    boundary = 0.5 * (ranked[k - 1] + ranked[k])
    pairs = np.asarray(e.pairs, dtype=np.float64)
    weight = pairs * gap.between / (pairs * gap.between + gap.within)
    own_mean = np.divide(e.gap_sums, pairs, out=np.full(pairs.shape, gap.mean), where=pairs > 0)
    own = gap.mean + weight * (own_mean - gap.mean)
    unchecked = np.clip(counts - e.checked, 0.0, None)
    spread = z * np.sqrt(unchecked**2 * gap.between * (1.0 - weight) + unchecked * gap.within)
    low = score(e.counts, e.sums + unchecked * own - spread)
    high = score(e.counts, e.sums + unchecked * own + spread)
    inside = current >= boundary
    in_play = np.flatnonzero(np.where(inside, low < boundary, high > boundary))
    centre = score(e.counts[in_play], (e.sums + unchecked * own)[in_play])
    side = np.where(inside[in_play], 1.0, -1.0)
    margin = side * (centre - boundary) / (high - low)[in_play]
    chosen: np.ndarray = e.topics[in_play[np.argsort(margin, kind="stable")]]
    return chosen


def topics_to_check(
    policy: Policy,
    sent: np.ndarray,
    judged: np.ndarray,
    automatic: np.ndarray,
    human: np.ndarray,
    z: float = Z,
) -> np.ndarray:
    """The rule on a running search: ``sent`` holds the topic of every pull sent to humans so
    far, ``judged`` the topic of every answered pair (``automatic`` and ``human`` difficulty,
    automatic on the scale the bandit sees)."""
    topics, _ = policy.ranking()
    judged = np.asarray(judged, dtype=np.int64)
    gaps = np.asarray(human, dtype=np.float64) - np.asarray(automatic, dtype=np.float64)
    n = policy.n_topics
    evidence = Evidence(
        topics=topics,
        counts=policy.stats.counts[topics],
        sums=policy.stats.sums[topics],
        checked=np.bincount(np.asarray(sent, dtype=np.int64), minlength=n)[topics],
        pairs=np.bincount(judged, minlength=n)[topics],
        gap_sums=np.bincount(judged, weights=gaps, minlength=n)[topics],
    )
    gap = learn_gap(automatic, human, judged)
    return boundary_topics(evidence, policy.k, gap, policy.score_of, z)
