"""Admin edits of concepts as services: merge, split, drop/restore, reject/restore."""

from __future__ import annotations

import pytest

from lexical.concepts import services
from lexical.models import Concept, ConceptExample, Variation
from tests.lexical.factories import (
    ConceptExampleFactory,
    ConceptFactory,
    VariationFactory,
    concept_with_variations,
)

pytestmark = pytest.mark.django_db


def _variation(concept: Concept, lemma: str) -> Variation:
    return concept.variations.get(lemma=lemma)


def test_merge_adds_counts_unites_forms_and_moves_examples():
    concept = ConceptFactory(lemma="trip")
    keep = VariationFactory(
        concept=concept, lemma="viaje", surface_forms=["viaje", "viajes"], count=60
    )
    absorb = VariationFactory(
        concept=concept, lemma="viajar", surface_forms=["viajes", "viajar"], count=40
    )
    ConceptExampleFactory.create_batch(2, variation=keep)
    moved = ConceptExampleFactory.create_batch(3, variation=absorb)
    merged = services.merge_variations(concept, keep.pk, absorb.pk)
    merged.refresh_from_db()
    assert (merged.count, merged.surface_forms) == (100, ["viaje", "viajes", "viajar"])
    assert not Variation.objects.filter(pk=absorb.pk).exists()
    assert set(ConceptExample.objects.filter(variation=merged).values_list("pk", flat=True)) >= {
        e.pk for e in moved
    }
    assert ConceptExample.objects.filter(variation=merged).count() == 5


def test_merge_refuses_a_variation_of_another_concept_and_changes_nothing():
    concept = concept_with_variations({"viaje": 60, "recorrido": 40})
    other = VariationFactory(lemma="elsewhere")
    keep = _variation(concept, "viaje")
    with pytest.raises(services.ConceptEditError, match="is not a variation of") as caught:
        services.merge_variations(concept, keep.pk, other.pk)
    assert caught.value.field == "absorb"
    with pytest.raises(services.ConceptEditError, match="two different"):
        services.merge_variations(concept, keep.pk, keep.pk)
    keep.refresh_from_db()
    assert keep.count == 60 and Variation.objects.filter(pk=other.pk).exists()


def test_split_moves_forms_and_their_examples_and_recounts():
    concept = ConceptFactory(lemma="trip")
    old = VariationFactory(
        concept=concept, lemma="viaje", surface_forms=["viaje", "gira", "giras"], count=100
    )
    ConceptExampleFactory.create_batch(3, variation=old, surface="viaje")
    ConceptExampleFactory(variation=old, surface="Gira")  # matched case-insensitively
    new = services.split_variation(concept, old.pk, ["gira", "giras"], lemma="gira")
    old.refresh_from_db()
    assert (new.lemma, new.surface_forms, new.count) == ("gira", ["gira", "giras"], 25)
    assert (old.surface_forms, old.count) == (["viaje"], 75)
    assert new.examples.count() == 1 and old.examples.count() == 3


def test_split_without_examples_starts_the_new_variation_at_zero():
    concept = ConceptFactory()
    old = VariationFactory(concept=concept, lemma="a", surface_forms=["a", "b"], count=80)
    new = services.split_variation(concept, old.pk, ["b"])
    old.refresh_from_db()
    assert (new.lemma, new.count, old.count) == ("b", 0, 80)


@pytest.mark.parametrize(
    ("forms", "lemma", "field", "message"),
    [
        ([], "", "surface_forms", "choose the surface forms"),
        (["nope"], "", "surface_forms", "'nope' are not surface forms"),
        (["viaje", "gira"], "", "surface_forms", "leave at least one"),
        (["gira"], "recorrido", "lemma", "already has a variation 'recorrido'"),
    ],
)
def test_split_refusals_change_nothing(forms, lemma, field, message):
    concept = ConceptFactory()
    old = VariationFactory(concept=concept, lemma="viaje", surface_forms=["viaje", "gira"], count=9)
    VariationFactory(concept=concept, lemma="recorrido")
    with pytest.raises(services.ConceptEditError, match=message) as caught:
        services.split_variation(concept, old.pk, forms, lemma)
    assert caught.value.field == field
    old.refresh_from_db()
    assert (old.surface_forms, old.count, concept.variations.count()) == (["viaje", "gira"], 9, 2)


def test_drop_and_restore_variation_and_reject_and_restore_concept():
    concept = concept_with_variations({"viaje": 60, "recorrido": 40})
    variation = _variation(concept, "recorrido")
    assert services.drop_variation(concept, variation.pk).dropped
    variation.refresh_from_db()
    assert variation.dropped and variation.examples.count() == 2
    services.restore_variation(concept, variation.pk)
    variation.refresh_from_db()
    assert not variation.dropped
    services.reject_concept(concept, "  two senses  ")
    concept.refresh_from_db()
    assert (concept.status, concept.note) == ("rejected", "two senses")
    services.restore_concept(concept)
    concept.refresh_from_db()
    assert (concept.status, concept.note) == ("active", "two senses")
