"""Empirical-Bayes UCB: an index policy on a normal prior estimated from the data.

Bayes-UCB (Kaufmann, Cappé & Garivier, 2012) with the prior fitted by empirical Bayes
(Efron & Morris, 1975) instead of fixed in advance, adapted to huge topic sets:
never-pulled topics are one arm class whose index is the prior's, so exploration of new topics
competes directly with refinement of known ones, and the index of a pulled topic shrinks its
noisy mean towards the population mean (seed 000 §3.3 notes that one pull is dominated by
per-text noise: sigma 15 against a spread of topic means of about 4).
"""

from __future__ import annotations

from typing import Any, Unpack

import numpy as np

from search.bandit.base import IndexPolicy, PolicyOptions
from search.bandit.noise import NoiseProbes
from search.bandit.prior import NormalPrior, PriorModel, fit_prior, prior_from_dict

__all__ = ["NOISY_SD", "EmpiricalBayesUcb", "beta_for_noise"]

_EMPTY = np.empty(0, dtype=np.int64)
# Per-text noise sd (difficulty on the platform's 0-100 scale) from which ``beta_noisy``
# replaces ``beta``: between the noise levels of the benchmark grid where beta 6 won or tied at
# 100k and 1M topics (sd <= 20) and where beta 3 won (sd 25 at 100k; a tie at 1M);
# docs/adr/0028.
NOISY_SD = 22.5


def beta_for_noise(
    noise_sd: float | None, beta: float, beta_noisy: float | None, noisy_sd: float = NOISY_SD
) -> float:
    """The index's exploration weight for a run whose per-text noise sd is ``noise_sd``.

    ``beta`` until the noise is known (or when ``beta_noisy`` is None); ``beta_noisy`` once the
    estimate reaches ``noisy_sd``. Why absolute noise and not a signal-to-noise ratio: the
    spread of topic means is the small difference of two large variances (marginal minus
    noise), which a run cannot estimate in its first rounds when the noise is high (sd 4
    against 25 in seed 000's world), while the noise sd itself is known to about 3 % from the
    probe pairs after a few batches; and difficulties share one 0-100 scale on the platform.
    """
    if beta_noisy is None or noise_sd is None or noise_sd < noisy_sd:
        return beta
    return beta_noisy


class EmpiricalBayesUcb(IndexPolicy):
    """Batched Bayes-UCB on an empirical-Bayes normal prior.

    1. Prior: ``estimate_prior`` (first-pull moments + pooled within-topic variance), refitted
       whenever the number of scored pulls has grown by the factor ``refresh`` since the last
       fit, so indices change globally only O(log B) times (each change costs one O(n) pass).
    2. Index of a pulled topic: posterior mean + beta * posterior sd, where pending pulls
       already count in the sd (Desautels et al., 2014) so a batch does not pile onto one arm.
       With ``beta_noisy`` set, beta drops to it at each refit where the probe-pair estimate
       of the per-text noise sd is at least ``noisy_sd`` (``beta_for_noise``): at high noise a
       wide index keeps re-pulling one-pull topics whose posterior barely moved.
    3. Index of a never-pulled topic: prior mean + beta * prior sd.
    4. A batch takes the b highest indices; slots won by the never-pulled class go to fresh
       topics drawn from a random permutation. ``cap`` optionally bounds pulls per topic.
    5. Recommendation defaults to the posterior mean (``recommend="posterior"``).
    """

    name = "eb_ucb"
    default_recommend = "posterior"

    def __init__(
        self,
        n_topics: int,
        k: int,
        rng: np.random.Generator,
        *,
        beta: float = 6.0,
        beta_noisy: float | None = None,
        noisy_sd: float = NOISY_SD,
        refresh: float = 1.25,
        explore: float | None = 0.67,
        **options: Unpack[PolicyOptions],
    ) -> None:
        # "not >= 0" also refuses NaN, which would make every index NaN.
        if not beta >= 0 or (beta_noisy is not None and not beta_noisy >= 0):
            raise ValueError("beta must be non-negative")
        if not noisy_sd > 0:
            raise ValueError("noisy_sd must be positive")
        if refresh <= 1.0:
            raise ValueError("refresh must be greater than 1")
        if explore is not None and not 0.0 < explore <= 1.0:
            raise ValueError("explore must be in (0, 1]")
        super().__init__(n_topics, k, rng, **options)
        self.beta = float(beta)
        self.beta_noisy = None if beta_noisy is None else float(beta_noisy)
        self.noisy_sd = float(noisy_sd)
        self.beta_now = self.beta  # the index's weight, set at each refit
        self.refresh = float(refresh)
        self.explore = None if explore is None else float(explore)
        self.explored = 0
        self.fitted: PriorModel | None = None
        self.refit_at = 0
        self.probes = NoiseProbes.for_budget(self.budget)

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "beta": self.beta,
            "beta_noisy": self.beta_noisy,
            "noisy_sd": self.noisy_sd,
            "refresh": self.refresh,
            "explore": self.explore,
        }

    def _choose(self, b: int) -> np.ndarray:
        self._maybe_refit()
        probes = self.probes.due(b, self.stats, self.cap)
        b -= probes.shape[0]
        if self.fitted is None:
            picked = self._draw_fresh(b)
            if picked.shape[0] == 0 and self.stats.n_pending == 0:
                picked = self.hot.top(b, self._score, self._universe)[0]
            return np.concatenate([probes, self.probes.enrol(picked)])
        cands, scores = self.hot.top(b + probes.shape[0], self._score, self._universe)
        keep = ~np.isin(cands, probes)
        cands, scores = cands[keep][:b], scores[keep][:b]
        fresh_index = self.fitted.mean + self.beta_now * np.sqrt(self.fitted.var)
        n_better = int(np.count_nonzero(scores > fresh_index))
        fresh = self.probes.enrol(self._draw_fresh(b - n_better))
        parts = [probes, cands[:n_better], fresh]
        short = b - n_better - fresh.shape[0]
        if short > 0:
            parts.append(cands[n_better : n_better + short])
        return np.concatenate(parts)

    def _draw_fresh(self, b: int) -> np.ndarray:
        """Never-pulled topics, within the exploration quota ``explore * budget``."""
        if self.explore is not None and self.budget is not None:
            b = min(b, max(int(self.explore * self.budget) - self.explored, 0))
        drawn = self.fresh.draw(b, self.stats) if b > 0 else _EMPTY
        self.explored += int(drawn.shape[0])
        return drawn

    def _maybe_refit(self) -> None:
        if self.fitted is not None and self.stats.n_scored < self.refit_at:
            return
        prior = fit_prior(self.stats, self.prior_kind, self._noise_sd())
        if prior is None:
            return
        self.fitted = prior
        self.beta_now = beta_for_noise(self._noise_sd(), self.beta, self.beta_noisy, self.noisy_sd)
        self.refit_at = max(int(self.stats.n_scored * self.refresh), self.stats.n_scored + 1)
        self.hot.invalidate()

    def _noise_sd(self) -> float | None:
        if self.noise_sd is not None:
            return self.noise_sd
        return self.probes.noise_sd()

    def prior(self) -> PriorModel | None:
        """As the base class, but with the probe-based noise estimate."""
        seen, cached = self._prior_cache
        if seen != self.stats.n_scored:
            cached = fit_prior(self.stats, self.prior_kind, self._noise_sd())
            self._prior_cache = (self.stats.n_scored, cached)
        return cached

    def _before_record(self, topics: np.ndarray) -> None:
        self.probes.before_record(topics, self.stats)

    def _score(self, topics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        counts = self.stats.counts[topics]
        pending = self.stats.pending[topics]
        eligible = counts > 0
        if self.cap is not None:
            eligible &= (counts + pending) < self.cap
        prior = self.fitted or NormalPrior(0.0, 1.0, 1.0)
        mean, var = prior.posterior(counts, self.stats.sums[topics], extra=pending)
        return mean + self.beta_now * np.sqrt(var), eligible

    def _observe(self, topics: np.ndarray) -> None:
        self.probes.after_record(self.stats)
        super()._observe(topics)

    def _state_to_dict(self) -> dict[str, Any]:
        return {
            **self._fresh_to_dict(),
            "fitted": None if self.fitted is None else self.fitted.to_dict(),
            "refit_at": self.refit_at,
            "explored": self.explored,
            "probes": self.probes.to_dict(),
            "beta_now": self.beta_now,
        }

    def _state_from_dict(self, data: dict[str, Any]) -> None:
        self._fresh_from_dict(data)
        self.fitted = None if data["fitted"] is None else prior_from_dict(data["fitted"])
        self.refit_at = int(data["refit_at"])
        self.explored = int(data["explored"])
        self.probes = NoiseProbes.from_dict(data["probes"])
        # States saved before beta_noisy existed always used beta.
        self.beta_now = float(data.get("beta_now", self.beta))
