"""Contextual bandit of seed 000 App. B.1 (Alg. 5): neighbours' scores stand in for a topic's.

Topics are similar when their keyword sets overlap (Jaccard index). A never-pulled topic with at
least two pulled neighbours is "scoreable": its score is the softmax(similarity)-weighted mean of
those neighbours' means, so a topic among easy neighbours need not be pulled at all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, TypeGuard, Unpack

import numpy as np

from search.bandit.base import IndexPolicy, PolicyOptions
from search.bandit.codec import decode_array, encode_array

__all__ = ["Contextual", "Neighbours", "jaccard", "shared_keywords"]

NeighbourLists = Sequence[Sequence[tuple[int, float]]]
# (indptr, indices, similarities), the CSR triple of ``search.topics.trees.neighbour_lists``.
NeighbourCsr = tuple[np.ndarray, np.ndarray, np.ndarray]


def jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def shared_keywords(keywords: Sequence[AbstractSet[str]], limit: int) -> Iterator[Counter[int]]:
    """For each keyword set in turn, the other sets it shares keywords with and how many.

    An inverted index from keyword to sets keeps this near-linear for real trees; a keyword of
    more than ``limit`` sets says little about similarity and would make the count quadratic,
    so it is skipped.
    """
    postings: dict[str, list[int]] = {}
    for index, words in enumerate(keywords):
        for word in words:
            postings.setdefault(word, []).append(index)
    for index, words in enumerate(keywords):
        shared: Counter[int] = Counter()
        for word in words:
            posting = postings[word]
            if len(posting) <= limit:
                shared.update(posting)
        shared.pop(index, None)
        yield shared


@dataclass(frozen=True, eq=False)
class Neighbours:
    """Symmetric sparse similarity graph in CSR form (8 bytes per directed edge)."""

    indptr: np.ndarray
    indices: np.ndarray
    similarity: np.ndarray

    @property
    def n_topics(self) -> int:
        return int(self.indptr.shape[0] - 1)

    @classmethod
    def from_edges(
        cls, n_topics: int, rows: np.ndarray, cols: np.ndarray, sims: np.ndarray
    ) -> Neighbours:
        """Build from directed edges; the graph is symmetrized, self-loops and sim <= 0 dropped.

        Where both directions are given with different similarities, the larger one is kept.
        """
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        sims = np.asarray(sims, dtype=np.float64)
        keep = (rows != cols) & (sims > 0)
        rows, cols, sims = rows[keep], cols[keep], sims[keep]
        r = np.concatenate([rows, cols])
        c = np.concatenate([cols, rows])
        s = np.concatenate([sims, sims])
        order = np.lexsort((-s, c, r))
        r, c, s = r[order], c[order], s[order]
        first = np.ones(r.shape[0], dtype=bool)
        first[1:] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
        r, c, s = r[first], c[first], s[first]
        indptr = np.zeros(n_topics + 1, dtype=np.int64)
        np.cumsum(np.bincount(r, minlength=n_topics), out=indptr[1:])
        return cls(indptr, c.astype(np.int32), s.astype(np.float32))

    @classmethod
    def from_csr(cls, indptr: np.ndarray, indices: np.ndarray, sims: np.ndarray) -> Neighbours:
        """From possibly one-directional CSR arrays (symmetrized here)."""
        indptr = np.asarray(indptr, dtype=np.int64)
        rows = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))
        return cls.from_edges(indptr.shape[0] - 1, rows, np.asarray(indices), np.asarray(sims))

    @classmethod
    def from_lists(cls, lists: NeighbourLists) -> Neighbours:
        """``lists[t]`` = [(other topic, similarity), ...]."""
        rows = [t for t, items in enumerate(lists) for _ in items]
        cols = [o for items in lists for o, _ in items]
        sims = [s for items in lists for _, s in items]
        return cls.from_edges(len(lists), np.array(rows), np.array(cols), np.array(sims))

    @classmethod
    def from_keywords(
        cls,
        keywords: Sequence[Iterable[str]],
        max_neighbours: int = 50,
        max_topics_per_keyword: int = 1000,
    ) -> Neighbours:
        """Jaccard similarity of keyword sets (seed 000 App. B.1), top ``max_neighbours`` each.

        Keywords shared by more than ``max_topics_per_keyword`` topics are ignored: they say
        little about similarity and would make the all-pairs count quadratic.
        """
        sets = [frozenset(k) for k in keywords]
        rows: list[int] = []
        cols: list[int] = []
        sims: list[float] = []
        for t, shared in enumerate(shared_keywords(sets, max_topics_per_keyword)):
            kws = sets[t]
            scored = [(c / (len(kws) + len(sets[o]) - c), o) for o, c in shared.items()]
            scored.sort(key=lambda item: (-item[0], item[1]))
            for sim, o in scored[:max_neighbours]:
                rows.append(t)
                cols.append(o)
                sims.append(sim)
        return cls.from_edges(len(sets), np.array(rows), np.array(cols), np.array(sims))

    def edges_of(self, topics: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(source position in ``topics``, neighbour, similarity) for every edge, vectorized."""
        starts = self.indptr[topics]
        lengths = self.indptr[topics + 1] - starts
        source = np.repeat(np.arange(topics.shape[0]), lengths)
        offsets = np.cumsum(lengths) - lengths
        pos = starts[source] + (np.arange(source.shape[0]) - offsets[source])
        return source, self.indices[pos].astype(np.int64), self.similarity[pos].astype(np.float64)

    def to_dict(self) -> dict[str, Any]:
        return {
            "indptr": encode_array(self.indptr),
            "indices": encode_array(self.indices),
            "similarity": encode_array(self.similarity),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Neighbours:
        return cls(
            decode_array(data["indptr"]),
            decode_array(data["indices"]),
            decode_array(data["similarity"]),
        )


class Contextual(IndexPolicy):
    """Seed 000 Alg. 5, batched.

    ContextualChoose: while some topic is unscoreable, pull a uniformly random never-pulled
    topic; otherwise pull the highest ContextualScore among topics with |t*| < c.

    ContextualScore(t) = beta * mean(t) + (1 - beta) * softmax(sim(t, N)) . mean(N), where N
    are t's pulled neighbours and beta = 0, 0.5, 1 for |t*| = 0, 1, >= 2; unscoreable when
    |t*| = 0 and |N| < 2. With |t*| = 1 and no pulled neighbour the neighbour term is undefined
    and the topic's own mean is used.

    The softmax sums exp(sim / temperature) per topic incrementally: pulling topic o changes
    the sums of o's neighbours only, so an update costs O(degree), not O(n_topics).
    """

    name = "contextual"
    default_cap = 5

    def __init__(
        self,
        n_topics: int,
        k: int,
        rng: np.random.Generator,
        *,
        neighbours: Neighbours | NeighbourCsr | NeighbourLists | None = None,
        keywords: Sequence[Iterable[str]] | None = None,
        temperature: float = 1.0,
        **options: Unpack[PolicyOptions],
    ) -> None:
        super().__init__(n_topics, k, rng, **options)
        if temperature <= 0:
            raise ValueError("temperature must be positive")
        self.temperature = float(temperature)
        self.graph = _as_graph(neighbours, keywords)
        if self.graph.n_topics != self.n_topics:
            raise ValueError("neighbours/keywords must describe exactly n_topics topics")
        self.nb_weight = np.zeros(self.n_topics, dtype=np.float64)
        self.nb_weighted_mean = np.zeros(self.n_topics, dtype=np.float64)
        self.nb_count = np.zeros(self.n_topics, dtype=np.int32)
        self.n_unscoreable = self.n_topics
        self._pre: tuple[np.ndarray, np.ndarray, int] | None = None

    def params(self) -> dict[str, Any]:
        return {**super().params(), "temperature": self.temperature}

    @classmethod
    def restore_params(cls, data: dict[str, Any]) -> dict[str, Any]:
        return {"neighbours": Neighbours.from_dict(data["state"]["graph"])}

    # -- selection -----------------------------------------------------------------------------

    def _choose(self, b: int) -> np.ndarray:
        picked = self.fresh.draw(b, self.stats) if self.n_unscoreable > 0 else _EMPTY
        if picked.shape[0] < b:
            exploit = self.hot.top(b, self._score, self._universe)[0]
            exploit = exploit[~np.isin(exploit, picked)][: b - picked.shape[0]]
            picked = np.concatenate([picked, exploit])
        return picked

    def _score(self, topics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        counts = self.stats.counts[topics]
        nb_count = self.nb_count[topics]
        with np.errstate(invalid="ignore", divide="ignore"):
            own = self.stats.sums[topics] / counts
            nb = self.nb_weighted_mean[topics] / self.nb_weight[topics]
        nb = np.where(nb_count > 0, nb, own)
        scores = np.where(counts >= 2, own, np.where(counts == 1, 0.5 * own + 0.5 * nb, nb))
        eligible = (counts > 0) | (nb_count >= 2)
        if self.cap is not None:
            eligible &= (counts + self.stats.pending[topics]) < self.cap
        return scores, eligible

    def _universe(self) -> np.ndarray:
        return np.flatnonzero((self.stats.counts > 0) | (self.nb_count >= 2))

    # -- bookkeeping ---------------------------------------------------------------------------

    def _affected(self, topics: np.ndarray) -> np.ndarray:
        _, nbrs, _ = self.graph.edges_of(topics)
        return np.union1d(topics, nbrs)

    def _unscoreable(self, topics: np.ndarray) -> int:
        return int(np.count_nonzero((self.stats.counts[topics] == 0) & (self.nb_count[topics] < 2)))

    def _before_record(self, topics: np.ndarray) -> None:
        affected = self._affected(topics)
        self._pre = (topics, self.stats.means(topics), self._unscoreable(affected))

    def _observe(self, topics: np.ndarray) -> None:
        if self._pre is not None:
            updated, old, unscoreable_before = self._pre
            self._pre = None
            self._propagate(updated, old)
            affected = self._affected(updated)
            self.n_unscoreable += self._unscoreable(affected) - unscoreable_before
            topics = affected
        super()._observe(topics)

    def _propagate(self, topics: np.ndarray, old: np.ndarray) -> None:
        """Move each updated topic's mean change into its neighbours' softmax sums."""
        new = self.stats.means(topics)
        source, nbrs, sims = self.graph.edges_of(topics)
        weight = np.exp(sims / self.temperature)
        first = np.isnan(old)[source]
        delta = np.where(first, new[source], new[source] - np.nan_to_num(old[source]))
        np.add.at(self.nb_count, nbrs[first], 1)
        np.add.at(self.nb_weight, nbrs[first], weight[first])
        np.add.at(self.nb_weighted_mean, nbrs, weight * delta)

    def _state_to_dict(self) -> dict[str, Any]:
        return {"graph": self.graph.to_dict(), **self._fresh_to_dict()}

    def _state_from_dict(self, data: dict[str, Any]) -> None:
        self._fresh_from_dict(data)
        self._rebuild_neighbour_sums()

    def _rebuild_neighbour_sums(self) -> None:
        """Recompute the softmax sums from the statistics (after a restore)."""
        self.nb_weight[:] = 0.0
        self.nb_weighted_mean[:] = 0.0
        self.nb_count[:] = 0
        scored = np.flatnonzero(self.stats.counts > 0)
        self._propagate(scored, np.full(scored.shape[0], np.nan))
        self.n_unscoreable = self._unscoreable(np.arange(self.n_topics))


_EMPTY = np.empty(0, dtype=np.int64)


def _is_csr(value: object) -> TypeGuard[NeighbourCsr]:
    return (
        isinstance(value, tuple)
        and len(value) == 3
        and all(isinstance(part, np.ndarray) for part in value)
    )


def _as_graph(
    neighbours: Neighbours | NeighbourCsr | NeighbourLists | None,
    keywords: Sequence[Iterable[str]] | None,
) -> Neighbours:
    """Accept a graph, a CSR triple, per-topic (neighbour, similarity) lists, or keywords."""
    if (neighbours is None) == (keywords is None):
        raise ValueError("contextual needs exactly one of neighbours or keywords")
    if keywords is not None:
        return Neighbours.from_keywords(keywords)
    if isinstance(neighbours, Neighbours):
        return neighbours
    if _is_csr(neighbours):
        indptr, indices, sims = neighbours
        return Neighbours.from_csr(indptr, indices, sims)
    assert neighbours is not None
    return Neighbours.from_lists(neighbours)  # type: ignore[arg-type]
