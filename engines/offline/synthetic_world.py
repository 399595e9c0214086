"""Synthetic topic world of seed 000 §3.3 ("Search Algorithms at Scale").

Pure numpy; no Django import. The engine kind "synthetic" wraps it (``synthetic_adapters``), and
the bandit benchmarks drive it directly.

Generative process (seed 000 §3.3, Fig. 4/5):

1. Each topic ``t`` gets a mean difficulty ``mu_t`` drawn from a Gaussian mixture.
2. A text drawn from topic ``t`` has difficulty ``d ~ N(mu_t, sigma^2)`` (``noise_sd`` = sigma).

Calibration. The paper's fitted mixture is not published, so the defaults below were fitted by a
grid search (expected order statistics over 400 simulated worlds) to the numbers the brief and
the paper quote for |T| = 3.2k: oracle top-1 ≈ 36 and top-10 mean ≈ 25. Measured expectations
of the defaults:

    |T|      3.2k   10k    100k   1M
    top-1    36.5   43.1   54.1   64.4
    top-10   25.0   32.0   45.5   55.2

Matching a top-1/top-10 gap of 11 at 3.2k needs a rare, wide third component (0.5 % of topics,
sd 13), so the oracle grows by about +10 per decade of |T|, faster than the "+5 per decade" the
paper reports for its own (more conservative) synthetic world. Difficulties are not clipped to
[0, 100]: the paper's process is an unclipped normal and clipping would shift the topic means.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

__all__ = ["DEFAULT_LOCS", "DEFAULT_SCALES", "DEFAULT_WEIGHTS", "SyntheticWorld"]

DEFAULT_WEIGHTS: tuple[float, ...] = (0.6975, 0.2975, 0.005)
DEFAULT_LOCS: tuple[float, ...] = (6.0, 10.0, 14.0)
DEFAULT_SCALES: tuple[float, ...] = (3.0, 4.0, 13.0)

_TWO_POW_53 = float(2**53)


def _mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finalizer: a bijection on uint64 with good avalanche (Steele et al., 2014)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    mixed: np.ndarray = x ^ (x >> np.uint64(31))
    return mixed


@dataclass(frozen=True)
class SyntheticWorld:
    """A replayable world of ``n_topics`` synthetic topics (seed 000 §3.3).

    ``true_means`` are float32 so that 10M topics take 40 MB.
    """

    n_topics: int
    seed: int = 0
    noise_sd: float = 15.0
    weights: tuple[float, ...] = field(default=DEFAULT_WEIGHTS)
    locs: tuple[float, ...] = field(default=DEFAULT_LOCS)
    scales: tuple[float, ...] = field(default=DEFAULT_SCALES)

    def __post_init__(self) -> None:
        if self.n_topics < 1:
            raise ValueError("n_topics must be positive")
        if self.n_topics >= 2**32:
            raise ValueError("n_topics must fit in 32 bits (topic ids are hashed as uint32)")
        if not len(self.weights) == len(self.locs) == len(self.scales):
            raise ValueError("weights, locs and scales must have the same length")
        if abs(sum(self.weights) - 1.0) > 1e-9 or min(self.weights) < 0:
            raise ValueError("weights must be a probability vector")
        if self.noise_sd < 0 or min(self.scales) < 0:
            raise ValueError("standard deviations must be non-negative")

    @cached_property
    def true_means(self) -> np.ndarray:
        """mu_t for every topic (float32), drawn once from the mixture with the world seed."""
        rng = np.random.default_rng([self.seed, 0x5E1D])
        comp = rng.choice(len(self.weights), size=self.n_topics, p=np.asarray(self.weights))
        noise = rng.standard_normal(self.n_topics, dtype=np.float32)
        locs = np.asarray(self.locs, dtype=np.float32)
        scales = np.asarray(self.scales, dtype=np.float32)
        means: np.ndarray = locs[comp] + scales[comp] * noise
        return means

    @cached_property
    def _keys(self) -> tuple[np.uint64, np.uint64]:
        base = _mix64(np.asarray([self.seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64))
        k1 = _mix64(base ^ np.uint64(0x9E3779B97F4A7C15))
        k2 = _mix64(base ^ np.uint64(0xD1B54A32D192ED03))
        return np.uint64(k1[0]), np.uint64(k2[0])

    def sample(self, topics: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Draw one fresh text difficulty per entry of ``topics`` (step 2 of §3.3)."""
        idx = np.asarray(topics, dtype=np.int64)
        noise = rng.standard_normal(idx.shape)
        return self.true_means[idx].astype(np.float64) + self.noise_sd * noise

    def difficulty_of(self, topics: np.ndarray | int, draws: np.ndarray | int) -> np.ndarray:
        """Difficulty of text number ``draws`` of ``topics``: a pure function of the world seed.

        A synthetic "text" is identified by (topic, draw index), so a replayed run sees the same
        difficulty for the same text, whatever order it is drawn in. The normal deviate comes
        from two counter-based hashes and the Box-Muller transform, vectorized.
        """
        t = np.asarray(topics, dtype=np.int64)
        d = np.asarray(draws, dtype=np.int64)
        t, d = np.broadcast_arrays(t, d)
        if t.size and (t.min() < 0 or t.max() >= self.n_topics):
            raise IndexError("topic index out of range")
        if d.size and (d.min() < 0 or d.max() >= 2**32):
            raise ValueError("draw index must be in [0, 2**32)")
        x = (t.astype(np.uint64) << np.uint64(32)) | d.astype(np.uint64)
        k1, k2 = self._keys
        h1 = _mix64(x ^ k1)
        h2 = _mix64(x ^ k2)
        u1 = ((h1 >> np.uint64(11)).astype(np.float64) + 0.5) / _TWO_POW_53
        u2 = (h2 >> np.uint64(11)).astype(np.float64) / _TWO_POW_53
        z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
        return self.true_means[t].astype(np.float64) + self.noise_sd * z

    def oracle_top_k(self, k: int) -> np.ndarray:
        """Indices of the ``k`` topics with the highest true mean, best first."""
        k = min(k, self.n_topics)
        means = self.true_means
        part = np.argpartition(-means, k - 1)[:k] if k < self.n_topics else np.arange(k)
        order = np.lexsort((part, -means[part]))
        return part[order]

    def value_of(self, topics: np.ndarray) -> float:
        """Average true mean of a recommended set: the score of seed 000 §2.1."""
        idx = np.asarray(topics, dtype=np.int64)
        if idx.size == 0:
            return float("nan")
        return float(self.true_means[idx].astype(np.float64).mean())

    def to_dict(self) -> dict[str, Any]:
        """Parameters only: the means are regenerated from the seed."""
        return {
            "n_topics": self.n_topics,
            "seed": self.seed,
            "noise_sd": self.noise_sd,
            "weights": list(self.weights),
            "locs": list(self.locs),
            "scales": list(self.scales),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SyntheticWorld:
        return cls(
            n_topics=int(data["n_topics"]),
            seed=int(data["seed"]),
            noise_sd=float(data["noise_sd"]),
            weights=tuple(float(w) for w in data["weights"]),
            locs=tuple(float(v) for v in data["locs"]),
            scales=tuple(float(v) for v in data["scales"]),
        )

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> SyntheticWorld:
        """The world a synthetic engine's parameters describe (only ``n_topics`` is required;
        the others default as above). Raises ValueError for an impossible world."""
        kwargs: dict[str, Any] = {"n_topics": int(params["n_topics"])}
        if "seed" in params:
            kwargs["seed"] = int(params["seed"])
        if "noise_sd" in params:
            kwargs["noise_sd"] = float(params["noise_sd"])
        for key in ("weights", "locs", "scales"):
            if key in params:
                kwargs[key] = tuple(float(v) for v in params[key])
        return cls(**kwargs)
