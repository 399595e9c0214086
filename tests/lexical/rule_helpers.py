"""Small local fixtures for the rule tests: a corpus with a concept or two, their variations and
example sentences whose context words differ per variation (``tests/lexical/factories.py``
belongs to another part of the work)."""

from __future__ import annotations

from decimal import Decimal

from engines.services import save_engine
from lexical.models import (
    Concept,
    ConceptExample,
    ExampleSelection,
    MiningJob,
    ParallelCorpus,
    SentencePair,
    Variation,
)

# concept lemma -> {variation lemma: (surface forms, context words)}
CONCEPTS = {
    "date": {
        "khorma": (["khorma"], ["palm", "sweet", "fruit"]),
        "tarikh": (["tarikh", "tarikhha"], ["calendar", "meeting", "deadline"]),
    },
    "trip": {
        "viaje": (["viaje", "viajes"], ["plane", "abroad", "luggage"]),
        "recorrido": (["recorrido"], ["museum", "guided", "walk"]),
        "excursion": (["excursión"], ["school", "mountain", "picnic"]),
    },
}


def sentence(concept: str, words: list[str], n: int) -> str:
    """A distinct sentence with the concept and two of the variation's context words; longer
    as ``n`` grows, so the longest-first order is known."""
    a, b = words[n % len(words)], words[(n + 1) % len(words)]
    return f"The {concept} had {a} and {b} " + " ".join(["again"] * n) + f" case {n}."


def make_mining_job(name: str = "Small corpus", per_variation: int = 4) -> MiningJob:
    corpus = ParallelCorpus.objects.create(name=name, src_lang="en", tgt_lang="es")
    job = MiningJob.objects.create(corpus=corpus, status="finished")
    position = 0
    for lemma, variations in CONCEPTS.items():
        concept = Concept.objects.create(
            mining_job=job, src_lang="en", tgt_lang="es", lemma=lemma, pos="NOUN"
        )
        for var_lemma, (forms, words) in variations.items():
            variation = Variation.objects.create(
                concept=concept, lemma=var_lemma, surface_forms=forms, count=50 + len(words)
            )
            for n in range(per_variation):
                position += 1
                src = sentence(lemma, words, n)
                pair = SentencePair.objects.create(
                    corpus=corpus, position=position, src=src, tgt=f"{forms[0]} {n}"
                )
                ConceptExample.objects.create(
                    concept=concept, variation=variation, pair=pair, src_tokens=len(src.split())
                )
    return job


def concept(job: MiningJob, lemma: str) -> Concept:
    return job.concepts.get(lemma=lemma)


def make_selection(job: MiningJob, lemmas: list[str]) -> ExampleSelection:
    selection = ExampleSelection.objects.create(name="Study", src_lang="en", tgt_lang="es", seed=1)
    selection.concepts.set(job.concepts.filter(lemma__in=lemmas))
    return selection


def world_engine(name: str = "world", **params) -> None:
    save_engine({"name": name, "kind": "lexical_world", "capabilities": ["chat"], "params": params})


def remote_engine(base_url: str, name: str = "remote", **fields) -> None:
    save_engine(
        {
            "name": name,
            "kind": "openai_chat",
            "capabilities": ["chat"],
            "model": f"model-{name}",
            "base_url": base_url,
            "max_retries": 0,
            "price_in_per_1k": Decimal("1"),
            "price_out_per_1k": Decimal("2"),
            **fields,
        }
    )
