"""Factories for the lexical app (seed 004): corpora, pairs, mining jobs, concepts, variations
and examples. ``ConceptExampleFactory`` builds a pair whose marked words are really at the
stored offsets, so pages and selections can be tested on realistic rows."""

from __future__ import annotations

import factory

from lexical.models import (
    Concept,
    ConceptExample,
    MiningJob,
    ParallelCorpus,
    SentencePair,
    Variation,
)


class ParallelCorpusFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ParallelCorpus

    name = factory.Sequence(lambda n: f"corpus-{n}")
    src_lang = "en"
    tgt_lang = "es"
    source_format = "tsv"
    size = 0


class SentencePairFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SentencePair

    corpus = factory.SubFactory(ParallelCorpusFactory)
    position = factory.Sequence(lambda n: n + 1)
    src = factory.Sequence(lambda n: f"Source sentence {n}.")
    tgt = factory.Sequence(lambda n: f"Frase de origen {n}.")


class MiningJobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = MiningJob

    corpus = factory.SubFactory(ParallelCorpusFactory)
    params = factory.LazyFunction(dict)
    status = MiningJob.Status.FINISHED


class ConceptFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Concept

    mining_job = factory.SubFactory(MiningJobFactory)
    src_lang = factory.LazyAttribute(
        lambda c: c.mining_job.corpus.src_lang if c.mining_job else "en"
    )
    tgt_lang = factory.LazyAttribute(
        lambda c: c.mining_job.corpus.tgt_lang if c.mining_job else "es"
    )
    lemma = factory.Sequence(lambda n: f"word{n}")
    pos = "NOUN"
    total_count = 0


class VariationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Variation

    concept = factory.SubFactory(ConceptFactory)
    lemma = factory.Sequence(lambda n: f"palabra{n}")
    surface_forms = factory.LazyAttribute(lambda v: [v.lemma])
    count = 50


class ConceptExampleFactory(factory.django.DjangoModelFactory):
    """An example whose sentence pair contains the concept lemma and the variation's first
    surface form, with the offsets pointing at them; pass ``surface=`` for another form."""

    class Meta:
        model = ConceptExample
        exclude = ("surface",)

    variation = factory.SubFactory(VariationFactory)
    concept = factory.SelfAttribute("variation.concept")
    surface = factory.LazyAttribute(
        lambda e: e.variation.surface_forms[0] if e.variation.surface_forms else e.variation.lemma
    )
    pair = factory.LazyAttribute(
        lambda e: SentencePairFactory(
            corpus=e.concept.mining_job.corpus if e.concept.mining_job else ParallelCorpusFactory(),
            src=f"We talked about the {e.concept.lemma} yesterday.",
            tgt=f"Hablamos del {e.surface} ayer.",
        )
    )
    src_start = factory.LazyAttribute(lambda e: len("We talked about the "))
    src_end = factory.LazyAttribute(lambda e: len("We talked about the ") + len(e.concept.lemma))
    tgt_start = factory.LazyAttribute(lambda e: len("Hablamos del "))
    tgt_end = factory.LazyAttribute(lambda e: len("Hablamos del ") + len(e.surface))
    src_tokens = 6


def concept_with_variations(
    counts: dict[str, int], *, examples: int | dict[str, int] = 2, **concept_fields
) -> Concept:
    """A concept whose variations are named and counted by ``counts`` ({lemma: count}), each
    with ``examples`` examples (or as many as ``examples[lemma]``)."""
    concept = ConceptFactory(total_count=sum(counts.values()), **concept_fields)
    for lemma, count in counts.items():
        variation = VariationFactory(concept=concept, lemma=lemma, count=count)
        wanted = examples if isinstance(examples, int) else examples.get(lemma, 0)
        ConceptExampleFactory.create_batch(wanted, variation=variation)
    return concept
