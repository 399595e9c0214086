"""Data and scripted engines for the evaluation tests: a small Spanish selection with two
concepts and engines on the fake OpenAI server that answer by script (by model name)."""

from __future__ import annotations

import json
import re
from typing import Any

from lexical.models import Concept, ConceptExample, ExampleSelection, SelectedExample, Variation
from tests.engines.factories import EngineFactory
from tests.engines.fake_openai import Reply

# (concept, [(variation lemma, surface forms, count)], [(source, attested lemma)]).
CONCEPTS = [
    (
        "trip",
        [("viaje", ["viaje", "viajes"], 70), ("recorrido", ["recorrido"], 30)],
        [
            ("We booked a trip to Spain for the holidays.", "viaje"),
            ("The bus trip along the coast route was short.", "recorrido"),
            ("Our trip abroad was fun.", "viaje"),
        ],
    ),
    (
        "plane",
        [
            ("avión", ["avión", "aviones"], 60),
            ("plano", ["plano"], 35),
            ("aeroplano", ["aeroplano"], 5),
        ],
        [
            ("The plane landed at the airport.", "avión"),
            ("Draw the plane of the geometry figure.", "plano"),
        ],
    ),
]
# What the scripted translator writes for each source: exact, inflected (fuzzy) or unrelated.
TRANSLATIONS = {
    "We booked a trip to Spain for the holidays.": "Reservamos un viaje a España.",
    "The bus trip along the coast route was short.": "El viajecito en autobús fue corto.",
    "Our trip abroad was fun.": "Nuestra excursión fue divertida.",
    "The plane landed at the airport.": "Los aviones aterrizaron.",
    "Draw the plane of the geometry figure.": "Dibuja el planos de la figura.",
}
_ASK = re.compile(r'in "(?P<source>.*)" from the following list: (?P<options>\[.*?\])\.')


def make_selection(name: str = "Spanish study") -> ExampleSelection:
    selection = ExampleSelection.objects.create(name=name, src_lang="en", tgt_lang="es", seed=3)
    position = 0
    for lemma, variations, examples in CONCEPTS:
        concept = Concept.objects.create(src_lang="en", tgt_lang="es", lemma=lemma, pos="NOUN")
        selection.concepts.add(concept)
        by_lemma = {
            v: Variation.objects.create(concept=concept, lemma=v, surface_forms=forms, count=count)
            for v, forms, count in variations
        }
        for source, attested in examples:
            example = ConceptExample.objects.create(
                concept=concept, variation=by_lemma[attested], src=source, tgt="-"
            )
            SelectedExample.objects.create(selection=selection, example=example, position=position)
            position += 1
    return selection


def gold(source: str) -> str:
    for _, _, examples in CONCEPTS:
        for text, attested in examples:
            if text == source:
                return attested
    raise KeyError(source)


def rules_table(selection: ExampleSelection, generator: str) -> dict[int, dict[int, str]]:
    """A rule per variation, as the rules branch would store them."""
    return {
        concept.pk: {
            v.pk: f"{generator} says: use «{v.lemma}» for {concept.lemma}."
            for v in concept.variations.all()
        }
        for concept in selection.concepts.all()
    }


def scripted(body: dict[str, Any]) -> Reply:
    """Lexical-selection answers by model: ``oracle`` right, ``contrarian`` wrong, ``lazy``
    forgets the backticks until reminded, ``mute`` never uses them, ``ruled`` right only when
    shown rules; translation prompts get :data:`TRANSLATIONS`."""
    prompt = body["messages"][-1]["content"]
    if "<START OF TRANSLATION>" in prompt:
        source = prompt.rsplit(" text:\n", 1)[-1]
        return Reply.translation(TRANSLATIONS.get(source, "???"))
    match = _ASK.search(prompt)
    if match is None:
        return Reply("I do not understand.")
    source, options = match["source"], json.loads(match["options"])
    right = next(o for o in options if gold(source) in o.split("/"))
    wrong = next(o for o in options if o != right)
    model = body["model"]
    reminded = "Please enclose your selected translation" in prompt
    if model == "oracle" or (model == "ruled" and prompt.startswith("Rules:")):
        return Reply(f"The context fits {right}. ```{right}```")
    if model == "lazy":
        return Reply(f"```{right}```" if reminded else f"I would say {right}.")
    if model == "mute":
        return Reply(f"Probably {right}.")
    return Reply(f"Reasoning... ```{wrong}```")


def make_engines(base_url: str, *names: str) -> None:
    for name in names:
        EngineFactory(name=name, model=name, base_url=base_url)
