"""Admin edits of mined concepts, and creating example selections (seed 004 §2.1, App. A.2).

Every edit runs in one transaction over rows locked with ``select_for_update``, so two admins
editing one concept at once serialise instead of losing an update; a refused edit raises
:class:`ConceptEditError` and changes nothing.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence

import numpy as np
from django.db import transaction

from lexical.concepts.selection import Candidate, SelectionParams, select_examples
from lexical.models import Concept, ConceptExample, ExampleSelection, SelectedExample, Variation

__all__ = [
    "ConceptEditError",
    "SelectionError",
    "concepts_to_select",
    "create_example_selection",
    "drop_variation",
    "merge_variations",
    "new_selection_seed",
    "reject_concept",
    "restore_concept",
    "restore_variation",
    "split_variation",
]


class ConceptEditError(Exception):
    """An edit that cannot be made; ``field`` names the input at fault."""

    def __init__(self, message: str, *, field: str = ""):
        super().__init__(message)
        self.field = field


class SelectionError(Exception):
    def __init__(self, message: str, *, field: str = ""):
        super().__init__(message)
        self.field = field


def _locked_variation(concept: Concept, variation_id: int, field: str) -> Variation:
    try:
        return Variation.objects.select_for_update().get(pk=variation_id, concept=concept)
    except (Variation.DoesNotExist, ValueError, TypeError):
        raise ConceptEditError(
            f"variation #{variation_id} is not a variation of {concept}", field=field
        ) from None


def _surface_of(example: ConceptExample) -> str:
    if example.tgt_start is None or example.tgt_end is None:
        return ""
    return example.target_text[example.tgt_start : example.tgt_end]


def merge_variations(concept: Concept, keep_id: int, absorb_id: int) -> Variation:
    """Merge variation ``absorb`` into ``keep`` (two forms of one word the lemmatiser kept
    apart): counts add, surface forms are united (``keep``'s first, in order), examples move,
    and ``absorb`` is deleted."""
    if keep_id == absorb_id:
        raise ConceptEditError("choose two different variations", field="absorb")
    with transaction.atomic():
        keep = _locked_variation(concept, keep_id, "keep")
        absorb = _locked_variation(concept, absorb_id, "absorb")
        keep.count += absorb.count
        keep.surface_forms = list(dict.fromkeys([*keep.surface_forms, *absorb.surface_forms]))
        keep.dropped = keep.dropped and absorb.dropped
        ConceptExample.objects.filter(variation=absorb).update(variation=keep)
        absorb.delete()
        keep.save(update_fields=["count", "surface_forms", "dropped"])
    return keep


def split_variation(
    concept: Concept, variation_id: int, surface_forms: Sequence[str], lemma: str = ""
) -> Variation:
    """Move ``surface_forms`` of a variation into a new variation named ``lemma`` (default: the
    first moved form), with the examples whose marked target word is one of those forms.

    Counts are recounted from the examples: the new variation gets the share of the old count
    that its examples are of the old examples (exact when the examples are every occurrence,
    as for a small corpus; an estimate when the miner kept a sample). Without examples the
    split cannot be counted, so the new variation starts at 0 and the old keeps its count.
    """
    wanted = [form.strip() for form in surface_forms if form and form.strip()]
    if not wanted:
        raise ConceptEditError("choose the surface forms to move", field="surface_forms")
    with transaction.atomic():
        old = _locked_variation(concept, variation_id, "variation")
        unknown = [form for form in wanted if form not in old.surface_forms]
        if unknown:
            raise ConceptEditError(
                f"{', '.join(map(repr, unknown))} are not surface forms of {old.label!r}",
                field="surface_forms",
            )
        if len(set(wanted)) == len(old.surface_forms):
            raise ConceptEditError(
                "leave at least one surface form in the old variation", field="surface_forms"
            )
        name = (lemma or wanted[0]).strip()[:200]
        if Variation.objects.filter(concept=concept, lemma=name).exists():
            raise ConceptEditError(f"the concept already has a variation {name!r}", field="lemma")
        moved_forms = {form.casefold() for form in wanted}
        examples = list(ConceptExample.objects.filter(variation=old).select_related("pair"))
        moving = [e.pk for e in examples if _surface_of(e).casefold() in moved_forms]
        new_count = round(old.count * len(moving) / len(examples)) if examples else 0
        new = Variation.objects.create(
            concept=concept,
            lemma=name,
            surface_forms=list(dict.fromkeys(wanted)),
            count=new_count,
            dropped=old.dropped,
        )
        ConceptExample.objects.filter(pk__in=moving).update(variation=new)
        old.surface_forms = [form for form in old.surface_forms if form not in set(wanted)]
        old.count -= new_count
        old.save(update_fields=["surface_forms", "count"])
    return new


def _set_dropped(concept: Concept, variation_id: int, dropped: bool) -> Variation:
    with transaction.atomic():
        variation = _locked_variation(concept, variation_id, "variation")
        variation.dropped = dropped
        variation.save(update_fields=["dropped"])
    return variation


def drop_variation(concept: Concept, variation_id: int) -> Variation:
    """Leave a variation out of selections, rules and evaluation (it does not mean the concept,
    say); its counts and examples stay, so :func:`restore_variation` undoes it."""
    return _set_dropped(concept, variation_id, True)


def restore_variation(concept: Concept, variation_id: int) -> Variation:
    return _set_dropped(concept, variation_id, False)


def _set_status(concept: Concept, status: str, note: str | None) -> Concept:
    with transaction.atomic():
        locked = Concept.objects.select_for_update().get(pk=concept.pk)
        locked.status = status
        fields = ["status"]
        if note is not None:
            locked.note = note.strip()[:2000]
            fields.append("note")
        locked.save(update_fields=fields)
    concept.status, concept.note = locked.status, locked.note
    return concept


def reject_concept(concept: Concept, note: str | None = None) -> Concept:
    """Keep a concept out of selections and studies (its variations are not lexical choices
    of one meaning); the note says why."""
    return _set_status(concept, Concept.Status.REJECTED, note)


def restore_concept(concept: Concept) -> Concept:
    return _set_status(concept, Concept.Status.ACTIVE, None)


# --- Example selection (App. A.2) -------------------------------------------------------


def new_selection_seed() -> int:
    """A random seed that fits the model's signed 64-bit field."""
    return secrets.randbelow(2**63)


def _candidates(concepts: Sequence[Concept]) -> list[Candidate]:
    variations = Variation.objects.filter(concept__in=concepts, dropped=False).order_by("id")
    counts: dict[int, dict[int, int]] = {c.pk: {} for c in concepts}
    for variation in variations:
        counts[variation.concept_id][variation.pk] = variation.count
    examples: dict[int, dict[int, list[int]]] = {c.pk: {} for c in concepts}
    rows = ConceptExample.objects.filter(
        concept__in=concepts, variation__dropped=False
    ).values_list("concept_id", "variation_id", "id")
    for concept_id, variation_id, example_id in rows.order_by("id"):
        examples[concept_id].setdefault(variation_id, []).append(example_id)
    return [Candidate(c.pk, counts[c.pk], examples[c.pk]) for c in concepts]


def create_example_selection(
    concepts: Iterable[Concept],
    *,
    name: str,
    seed: int | None = None,
    params: SelectionParams | None = None,
    source: dict | None = None,
) -> ExampleSelection:
    """Select examples for a study of one language pair and store them with the seed, so the
    same call with that seed selects the same examples. Rejected concepts are left out."""
    params = params or SelectionParams()
    name = (name or "").strip()
    if not name:
        raise SelectionError("a selection needs a name", field="name")
    if seed is None:
        seed = new_selection_seed()
    if not 0 <= seed < 2**63:
        raise SelectionError("the seed must be between 0 and 2**63 - 1", field="seed")
    chosen = [c for c in concepts if c.status == Concept.Status.ACTIVE]
    if not chosen:
        raise SelectionError("no active concept to select from", field="concepts")
    pairs = {(c.src_lang, c.tgt_lang) for c in chosen}
    if len(pairs) != 1:
        listed = ", ".join(f"{s}→{t}" for s, t in sorted(pairs))
        raise SelectionError(
            f"the concepts span several language pairs ({listed}); select one pair at a time",
            field="concepts",
        )
    ((src_lang, tgt_lang),) = pairs
    result = select_examples(_candidates(chosen), params, np.random.default_rng(seed))
    if not result.concepts:
        reasons = "; ".join(f"#{cid}: {why}" for cid, why in list(result.skipped.items())[:5])
        raise SelectionError(f"no concept qualifies ({reasons})", field="concepts")
    stored = {
        **params.as_dict(),
        "uniformity_filter_applied": result.uniformity_filter_applied,
        "qualified": result.qualified,
        "offered": len(chosen),
        "skipped": {str(cid): why for cid, why in result.skipped.items()},
        "source": source or {},
    }
    with transaction.atomic():
        selection = ExampleSelection.objects.create(
            name=name[:200], src_lang=src_lang, tgt_lang=tgt_lang, seed=seed, params=stored
        )
        selection.concepts.set([picked.concept_id for picked in result.concepts])
        SelectedExample.objects.bulk_create(
            SelectedExample(selection=selection, example_id=example_id, position=position)
            for position, example_id in enumerate(result.example_ids, start=1)
        )
    return selection


def concepts_to_select(
    queryset,
    *,
    mining_job: int | None = None,
    concept_ids: Sequence[int] = (),
) -> tuple[list[Concept], dict]:
    """The concepts a selection is made from (``queryset``: those the user may see) — all of a
    mining job's, or the listed ids, each of which must exist — and how they were chosen."""
    if mining_job and concept_ids:
        raise SelectionError("choose a mining job or concept ids, not both", field="concepts")
    if mining_job:
        concepts = list(queryset.filter(mining_job_id=mining_job).order_by("id"))
        if not concepts:
            raise SelectionError(
                f"mining job #{mining_job} has no concepts (or does not exist)",
                field="mining_job",
            )
        return concepts, {"mining_job": mining_job}
    ids = list(dict.fromkeys(concept_ids))
    if not ids:
        raise SelectionError("choose a mining job or list concept ids", field="concepts")
    found = {c.pk: c for c in queryset.filter(pk__in=ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        raise SelectionError(
            f"there is no concept {', '.join(f'#{i}' for i in missing[:10])}", field="concepts"
        )
    return [found[i] for i in sorted(ids)], {"concepts": sorted(ids)}
