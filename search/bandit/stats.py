"""Per-topic sufficient statistics and the empirical-Bayes prior shared by every policy.

Memory: counts (int32) + sums (float64) + sums of squares (float64) + pending (int32) = 24 bytes
per topic. Observations are not kept: mean, variance and the posterior need only these sums.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from search.bandit.codec import decode_array, encode_array

__all__ = ["FIRST_KEPT", "ArmStats"]

# First observations kept verbatim for fitting the nonparametric prior (512 KiB at most).
FIRST_KEPT = 65536
_EMPTY = np.empty(0, dtype=np.int64)


@dataclass
class ArmStats:
    """Sufficient statistics of the pulls of every topic, plus pulls still awaiting a score.

    ``first_*`` accumulate the first observation of each topic (the first ``FIRST_KEPT`` are also
    kept verbatim). First pulls are of topics drawn uniformly at random by every policy here, so
    they are an unbiased sample of the marginal difficulty distribution; later pulls are chosen
    adaptively and are not.
    """

    counts: np.ndarray
    sums: np.ndarray
    sumsq: np.ndarray
    pending: np.ndarray
    n_scored: int = 0
    n_pending: int = 0
    first_n: int = 0
    first_sum: float = 0.0
    first_sumsq: float = 0.0
    first_values: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.float64))
    # Unique topics changed since the last ``take_changes`` (one array per call; None until
    # ``track_changes``: an in-memory loop keeps nothing), and how many first values had been
    # taken then: what an incremental save writes (issue 19).
    _changed: list[np.ndarray] | None = field(default=None, repr=False, compare=False)
    _first_taken: int = field(default=0, repr=False, compare=False)

    @classmethod
    def zeros(cls, n_topics: int) -> ArmStats:
        return cls(
            counts=np.zeros(n_topics, dtype=np.int32),
            sums=np.zeros(n_topics, dtype=np.float64),
            sumsq=np.zeros(n_topics, dtype=np.float64),
            pending=np.zeros(n_topics, dtype=np.int32),
        )

    @property
    def n_topics(self) -> int:
        return int(self.counts.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.counts.nbytes + self.sums.nbytes + self.sumsq.nbytes + self.pending.nbytes)

    def reserve(self, topics: np.ndarray) -> None:
        """Mark pulls as selected but not yet scored."""
        uniq, occ = np.unique(topics, return_counts=True)
        self.pending[uniq] += occ.astype(np.int32)
        self.n_pending += int(topics.shape[0])
        self._note(uniq)

    def release(self, topics: np.ndarray) -> np.ndarray:
        """Forget pending pulls that will never be scored; returns the touched topics."""
        uniq, occ = np.unique(topics, return_counts=True)
        dec = np.minimum(self.pending[uniq], occ).astype(np.int32)
        self.pending[uniq] -= dec
        self.n_pending -= int(dec.sum())
        self._note(uniq)
        return uniq

    def record(self, topics: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Add scored pulls (duplicates allowed); returns the unique touched topics.

        A score for a topic with no pending pull is accepted as an extra, unsolicited pull: it
        still counts against the budget.
        """
        uniq, first_idx, inv, occ = np.unique(
            topics, return_index=True, return_inverse=True, return_counts=True
        )
        vsum = np.bincount(inv, weights=values, minlength=uniq.shape[0])
        vsq = np.bincount(inv, weights=values * values, minlength=uniq.shape[0])
        fresh = self.counts[uniq] == 0
        if fresh.any():
            first_values = values[first_idx[fresh]]
            self.first_n += int(first_values.shape[0])
            self.first_sum += float(first_values.sum())
            self.first_sumsq += float((first_values * first_values).sum())
            room = FIRST_KEPT - self.first_values.shape[0]
            if room > 0:
                self.first_values = np.concatenate([self.first_values, first_values[:room]])
        self.counts[uniq] += occ.astype(np.int32)
        self.sums[uniq] += vsum
        self.sumsq[uniq] += vsq
        dec = np.minimum(self.pending[uniq], occ).astype(np.int32)
        self.pending[uniq] -= dec
        self.n_pending -= int(dec.sum())
        self.n_scored += int(topics.shape[0])
        self._note(uniq)
        return uniq

    def revise(self, topics: np.ndarray, old: np.ndarray, new: np.ndarray) -> np.ndarray:
        """Swap recorded values ``old`` for ``new``; returns the unique touched topics.

        The verbatim first observations used by the nonparametric prior are left as they were
        (they only seed the prior's shape).
        """
        np.add.at(self.sums, topics, new - old)
        np.add.at(self.sumsq, topics, new * new - old * old)
        # Guard against float drift making a variance slightly negative.
        np.maximum.at(self.sumsq, topics, self.sums[topics] ** 2 / self.counts[topics])
        uniq = np.unique(topics)
        self._note(uniq)
        return uniq

    def means(self, topics: np.ndarray) -> np.ndarray:
        """Empirical means; NaN for topics never scored."""
        counts = self.counts[topics]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, self.sums[topics] / counts, np.nan)

    def to_dict(self) -> dict[str, Any]:
        """Sparse: only topics with a pull (scored or pending) are written."""
        touched = np.flatnonzero((self.counts > 0) | (self.pending > 0))
        # Delta-encoding the sorted ids makes them compress to about a byte each.
        gaps = np.diff(touched, prepend=0).astype(np.int64)
        return {
            "n_topics": self.n_topics,
            "gaps": encode_array(gaps),
            "counts": encode_array(self.counts[touched]),
            "sums": encode_array(self.sums[touched]),
            "sumsq": encode_array(self.sumsq[touched]),
            "pending": encode_array(self.pending[touched]),
            "n_scored": self.n_scored,
            "n_pending": self.n_pending,
            "first": [self.first_n, self.first_sum, self.first_sumsq],
            "first_values": encode_array(self.first_values),
        }

    # -- incremental persistence: small totals + the rows a save changed (issue 19) ----------

    def totals_to_dict(self) -> dict[str, Any]:
        """The scalars of ``to_dict`` without any per-topic array: O(1) whatever the run."""
        return {
            "n_topics": self.n_topics,
            "n_scored": self.n_scored,
            "n_pending": self.n_pending,
            "first": [self.first_n, self.first_sum, self.first_sumsq],
        }

    def _note(self, topics: np.ndarray) -> None:
        if self._changed is not None:
            self._changed.append(topics)

    def track_changes(self) -> None:
        """From now on remember changed topics for ``take_changes``."""
        if self._changed is None:
            self._changed = []
            self._first_taken = int(self.first_values.shape[0])

    def take_changes(self) -> dict[str, Any] | None:
        """The topics changed since the last call, with their current statistics, and the first
        values kept since; None when nothing changed. Cost O(changes), not O(topics).

        Applying every change in order to ``from_totals`` rebuilds these statistics exactly
        (values are copied, not added, so no rounding differs from the original).
        """
        if self._changed is None:
            raise RuntimeError("take_changes needs track_changes first")
        touched = np.unique(np.concatenate(self._changed)) if self._changed else _EMPTY
        first = self.first_values[self._first_taken :]
        self._changed = []
        self._first_taken = int(self.first_values.shape[0])
        if touched.shape[0] == 0 and first.shape[0] == 0:
            return None
        return self._rows_to_dict(touched, first)

    def _rows_to_dict(self, touched: np.ndarray, first: np.ndarray) -> dict[str, Any]:
        # Delta-encoding the sorted ids makes them compress to about a byte each.
        gaps = np.diff(touched, prepend=0).astype(np.int64)
        return {
            "gaps": encode_array(gaps),
            "counts": encode_array(self.counts[touched]),
            "sums": encode_array(self.sums[touched]),
            "sumsq": encode_array(self.sumsq[touched]),
            "pending": encode_array(self.pending[touched]),
            "first_values": encode_array(first),
        }

    def apply_changes(self, data: dict[str, Any]) -> None:
        """Overwrite the rows of one ``take_changes`` (or ``to_dict``) result and append its
        first values; the totals come from ``from_totals``."""
        touched = np.cumsum(decode_array(data["gaps"]))
        self.counts[touched] = decode_array(data["counts"])
        self.sums[touched] = decode_array(data["sums"])
        self.sumsq[touched] = decode_array(data["sumsq"])
        self.pending[touched] = decode_array(data["pending"])
        first = decode_array(data["first_values"]).astype(np.float64)
        if first.shape[0]:
            self.first_values = np.concatenate([self.first_values, first])
        self._first_taken = int(self.first_values.shape[0])

    @classmethod
    def from_totals(cls, data: dict[str, Any]) -> ArmStats:
        """Empty rows with the totals of ``totals_to_dict``; ``apply_changes`` fills them."""
        stats = cls.zeros(int(data["n_topics"]))
        stats._load_totals(data)
        return stats

    def _load_totals(self, data: dict[str, Any]) -> None:
        self.n_scored = int(data["n_scored"])
        self.n_pending = int(data["n_pending"])
        first_n, first_sum, first_sumsq = data["first"]
        self.first_n, self.first_sum, self.first_sumsq = (
            int(first_n),
            float(first_sum),
            float(first_sumsq),
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArmStats:
        stats = cls.zeros(int(data["n_topics"]))
        touched = np.cumsum(decode_array(data["gaps"]))
        stats.counts[touched] = decode_array(data["counts"])
        stats.sums[touched] = decode_array(data["sums"])
        stats.sumsq[touched] = decode_array(data["sumsq"])
        stats.pending[touched] = decode_array(data["pending"])
        stats._load_totals(data)
        stats.first_values = decode_array(data["first_values"]).astype(np.float64)
        return stats
