"""A small Farsi-like selection for the study tests: 'date' (3 variations, offsets known) and
'trip' (2 variations, no offsets), built on the evaluation tests' Spanish selection."""

from __future__ import annotations

from lexical.models import Concept, ConceptExample, ExampleSelection, SelectedExample, Variation
from lexical.studies.selection_study.services import StudyParams, create_selection_study

DATE_SENTENCES = [
    ("We ate a fresh date from the tree.", "rotab"),
    ("The dried date kept for months.", "khorma"),
    ("An unripe date is crunchy.", "kharak"),
]
TRIP_SENTENCES = [
    ("We booked a trip to Spain.", "safar"),
    ("The short trip along the coast.", "gasht"),
]


def make_study_selection(name: str = "Farsi study") -> ExampleSelection:
    selection = ExampleSelection.objects.create(name=name, src_lang="en", tgt_lang="fa", seed=7)
    position = 0
    for lemma, counts, sentences, offsets in (
        ("date", {"khorma": 60, "rotab": 30, "kharak": 10}, DATE_SENTENCES, True),
        ("trip", {"safar": 70, "gasht": 30}, TRIP_SENTENCES, False),
    ):
        concept = Concept.objects.create(src_lang="en", tgt_lang="fa", lemma=lemma, pos="NOUN")
        selection.concepts.add(concept)
        variations = {
            v: Variation.objects.create(concept=concept, lemma=v, surface_forms=[v], count=n)
            for v, n in counts.items()
        }
        for source, attested in sentences:
            start = source.index(lemma)
            example = ConceptExample.objects.create(
                concept=concept,
                variation=variations[attested],
                src=source,
                tgt=f"<{attested}> translation",
                src_start=start if offsets else None,
                src_end=start + len(lemma) if offsets else None,
            )
            SelectedExample.objects.create(selection=selection, example=example, position=position)
            position += 1
        # An example of the pool that the selection did not take (counts in Table 2's pool).
        ConceptExample.objects.create(
            concept=concept, variation=next(iter(variations.values())), src=f"Another {lemma}."
        )
    return selection


def make_study(selection: ExampleSelection | None = None, **params):
    selection = selection or make_study_selection()
    params.setdefault("name", f"Study of {selection.name}")
    return create_selection_study(selection, StudyParams(**params))
