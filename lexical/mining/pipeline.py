"""The mining passes end to end, one chunk of pairs at a time (seed 004 App. B.1).

Pass 1, per chunk: tokenise and lemmatise both sides (POS-tag the source when a tagger is
given), align the lemmas with eflomal, count the links between content words. Then the filters.
Pass 2, per chunk: collect example pairs for the concepts found. Memory holds one chunk, the
counts and the bounded examples; the job (``services``) persists the last two between rounds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

from lexical.mining.alignment import align
from lexical.mining.counting import MiningCounts
from lexical.mining.examples import ExampleCollector
from lexical.mining.filters import ConceptCandidate, FilterStats, PolysemyFilter, filter_concepts
from lexical.mining.params import MiningParams
from lexical.mining.text import (
    Lemmatiser,
    Tagger,
    Token,
    analyse,
    is_content,
    stop_words,
    tokenise,
)

__all__ = ["Miner", "MiningResult", "chunked", "mine"]

Pair = tuple[int, str, str]  # (pair id, source, target)


def chunked(pairs: Iterable[Pair], size: int) -> Iterator[list[Pair]]:
    iterator = iter(pairs)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _align_form(token: Token) -> str:
    # eflomal reads whitespace-separated tokens; a lemma never carries a space into it.
    return "_".join(token.lemma.split()) or "_"


class Miner:
    """Both passes for one language pair and one set of parameters."""

    def __init__(
        self,
        src_lang: str,
        tgt_lang: str,
        params: MiningParams,
        *,
        tagger: Tagger | None = None,
        aligner: Callable[[list[list[str]], list[list[str]]], list[list[tuple[int, int]]]] = align,
    ) -> None:
        self.params = params
        self.tagger = tagger
        self.aligner = aligner
        self.src = Lemmatiser(src_lang)
        self.tgt = Lemmatiser(tgt_lang)
        self.exclude = params.stopword_top_n > 0
        self.src_stops = stop_words(src_lang, params.stopword_top_n)
        self.tgt_stops = stop_words(tgt_lang, params.stopword_top_n)

    @property
    def pos_used(self) -> bool:
        return self.tagger is not None

    def _analyse(self, chunk: Sequence[Pair]) -> tuple[list[list[Token]], list[list[Token]]]:
        src = analyse((p[1] for p in chunk), self.src, self.tagger)
        tgt = analyse((p[2] for p in chunk), self.tgt, None)
        return src, tgt

    def count_chunk(self, chunk: Sequence[Pair], counts: MiningCounts) -> None:
        """Pass 1 on one chunk: lemmatise, align, add the links to ``counts``."""
        src, tgt = self._analyse(chunk)
        usable = [i for i in range(len(chunk)) if src[i] and tgt[i]]
        links = self.aligner(
            [[_align_form(t) for t in src[i]] for i in usable],
            [[_align_form(t) for t in tgt[i]] for i in usable],
        )
        for i, pair_links in zip(usable, links, strict=True):
            s_tokens, t_tokens = src[i], tgt[i]
            for a, b in pair_links:
                s, t = s_tokens[a], t_tokens[b]
                if is_content(s, self.src_stops, self.exclude) and is_content(
                    t, self.tgt_stops, self.exclude
                ):
                    counts.links[(s.lemma, s.pos, t.lemma)] += 1
                    counts.surfaces[(t.lemma, t.text.lower())] += 1
        counts.pairs_read += len(chunk)
        counts.pairs_aligned += len(usable)

    def select(
        self, counts: MiningCounts, polysemy: PolysemyFilter | None = None
    ) -> tuple[list[ConceptCandidate], FilterStats]:
        return filter_concepts(
            counts.links,
            min_variation_count=self.params.min_variation_count,
            min_variations=self.params.min_variations,
            min_entropy=self.params.min_entropy,
            polysemy=polysemy,
        )

    def collector(self, concepts: Sequence[ConceptCandidate]) -> ExampleCollector:
        return ExampleCollector(
            {c.key: [t for t, _ in c.variations] for c in concepts},
            max_examples=self.params.max_examples,
            token_limit=self.params.example_token_limit,
            pos_used=self.pos_used,
        )

    def collect_chunk(self, chunk: Sequence[Pair], collector: ExampleCollector) -> None:
        """Pass 2 on one chunk: examples of the concepts (no alignment needed). Only pairs whose
        source has a concept's lemma are analysed in full (and tagged): most pairs have none."""
        lemmas = {lemma for lemma, _ in collector.concepts}
        wanted = [p for p in chunk if any(self.src(w) in lemmas for w, _, _ in tokenise(p[1]))]
        src, tgt = self._analyse(wanted)
        for (pair, _, _), s_tokens, t_tokens in zip(wanted, src, tgt, strict=True):
            collector.add(pair, s_tokens, t_tokens)


@dataclass
class MiningResult:
    concepts: list[ConceptCandidate]
    stats: FilterStats
    counts: MiningCounts
    examples: ExampleCollector


def mine(
    pairs: Callable[[], Iterable[Pair]],
    src_lang: str,
    tgt_lang: str,
    params: MiningParams | None = None,
    *,
    tagger: Tagger | None = None,
    polysemy: PolysemyFilter | None = None,
) -> MiningResult:
    """Both passes in this process; ``pairs()`` is called once per pass (it streams)."""
    params = params or MiningParams()
    miner = Miner(src_lang, tgt_lang, params, tagger=tagger)
    counts = MiningCounts()
    for chunk in chunked(pairs(), params.chunk_size):
        miner.count_chunk(chunk, counts)
    concepts, stats = miner.select(counts, polysemy)
    collector = miner.collector(concepts)
    if concepts:
        for chunk in chunked(pairs(), params.chunk_size):
            miner.collect_chunk(chunk, collector)
    return MiningResult(concepts, stats, counts, collector)
