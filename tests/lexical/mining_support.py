"""Local helpers of the mining tests: a synthetic corpus in the database."""

from __future__ import annotations

from lexical.mining.synthetic import generate
from lexical.models import ParallelCorpus, SentencePair


def synthetic_corpus(
    n_pairs: int = 2500, seed: int = 11, name: str = "synthetic"
) -> ParallelCorpus:
    corpus = ParallelCorpus.objects.create(
        name=name, src_lang="en", tgt_lang="es", source_format="jsonl", size=n_pairs
    )
    SentencePair.objects.bulk_create(
        SentencePair(corpus=corpus, position=i, src=p.src, tgt=p.tgt)
        for i, p in enumerate(generate(n_pairs, seed=seed), start=1)
    )
    return corpus


def tiny_corpus(name: str = "tiny") -> ParallelCorpus:
    corpus = ParallelCorpus.objects.create(name=name, src_lang="en", tgt_lang="es", size=3)
    SentencePair.objects.bulk_create(
        SentencePair(corpus=corpus, position=i, src=src, tgt=tgt)
        for i, (src, tgt) in enumerate(
            [("A long trip.", "Un largo viaje."), ("The bank.", "El banco."), ("Hi.", "Hola.")],
            start=1,
        )
    )
    return corpus
