"""Demo data for the concept pages: an example selection of a mined demo corpus (the mining
helper's ``load`` builds the corpus and its concepts, then calls this)."""

from __future__ import annotations

from lexical.concepts.services import SelectionError, create_example_selection
from lexical.models import Concept, ExampleSelection, MiningJob

DEMO_SEED = 2024


def create_selection_for_demo(mining_job: MiningJob) -> ExampleSelection | None:
    """The App. A.2 selection of the job's active concepts, with a fixed seed; idempotent (a
    second call returns the first selection). None when no concept qualifies."""
    name = f"Demo study: {mining_job.corpus.name}"
    existing = ExampleSelection.objects.filter(name=name).first()
    if existing is not None:
        return existing
    concepts = Concept.objects.filter(mining_job=mining_job).order_by("id")
    try:
        return create_example_selection(
            concepts, name=name, seed=DEMO_SEED, source={"mining_job": mining_job.pk}
        )
    except SelectionError:
        return None
