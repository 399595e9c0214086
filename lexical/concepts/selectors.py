"""Read queries for concepts and example selections: access, filters, examples to show."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Prefetch, Q, QuerySet

from core.access import visible_or_404
from lexical.access import may_use_lexical
from lexical.models import Concept, ConceptExample, ExampleSelection, SelectedExample, Variation

__all__ = [
    "ConceptFilters",
    "ExampleView",
    "Marked",
    "concept_for_user",
    "concept_provenance",
    "concepts_for_user",
    "example_provenance",
    "example_views",
    "filter_concepts",
    "selection_examples",
    "selection_for_user",
    "selections_for_user",
    "variation_examples",
]

EXAMPLES_PER_VARIATION = 5


def concepts_for_user(user) -> QuerySet[Concept]:
    """Staff only, like the corpora they are mined from."""
    return Concept.objects.all() if may_use_lexical(user) else Concept.objects.none()


def concept_for_user(user, pk: int) -> Concept:
    """The one permission-checked accessor for concepts (pages, API, edits): 404 otherwise."""
    rows = concepts_for_user(user).select_related("mining_job__corpus")
    return visible_or_404(rows, pk, "No such concept.")


def selections_for_user(user) -> QuerySet[ExampleSelection]:
    if not may_use_lexical(user):
        return ExampleSelection.objects.none()
    # Meta.ordering does not survive the GROUP BY of the annotation: order explicitly.
    return ExampleSelection.objects.annotate(n_examples=Count("selected")).order_by(
        "-created_at", "-id"
    )


def selection_for_user(user, pk: int) -> ExampleSelection:
    """The one permission-checked accessor for example selections."""
    return visible_or_404(selections_for_user(user), pk, "No such selection.")


@dataclass(frozen=True)
class ConceptFilters:
    tgt_lang: str = ""
    mining_job: int | None = None
    status: str = ""
    pos: str = ""
    q: str = ""  # lemma search: a concept lemma or a variation's lemma containing it


def filter_concepts(concepts: QuerySet[Concept], filters: ConceptFilters) -> QuerySet[Concept]:
    """The browse list: filtered, with the active variations prefetched (no query per row)."""
    if filters.tgt_lang:
        concepts = concepts.filter(tgt_lang=filters.tgt_lang)
    if filters.mining_job is not None:
        concepts = concepts.filter(mining_job_id=filters.mining_job)
    if filters.status:
        concepts = concepts.filter(status=filters.status)
    if filters.pos:
        concepts = concepts.filter(pos=filters.pos)
    if filters.q:
        concepts = concepts.filter(
            Q(lemma__icontains=filters.q) | Q(variations__lemma__icontains=filters.q)
        ).distinct()
    active = Variation.objects.filter(dropped=False)
    return concepts.prefetch_related(Prefetch("variations", active, to_attr="active_variations"))


def filter_choices(concepts: QuerySet[Concept]) -> dict[str, list]:
    """Values the filter menus offer (from what exists)."""
    ordered = concepts.order_by()
    return {
        "languages": sorted(set(ordered.values_list("tgt_lang", flat=True))),
        "pos": sorted(set(ordered.exclude(pos="").values_list("pos", flat=True))),
        "mining_jobs": sorted(
            set(ordered.exclude(mining_job=None).values_list("mining_job_id", flat=True))
        ),
    }


@dataclass(frozen=True)
class Marked:
    """A text cut around one marked span; the template escapes each part."""

    before: str
    mark: str
    after: str

    @classmethod
    def of(cls, text: str, start: int | None, end: int | None) -> Marked:
        if start is None or end is None or not 0 <= start < end <= len(text):
            return cls(text, "", "")  # no offsets (or stale ones): show the text unmarked
        return cls(text[:start], text[start:end], text[end:])


@dataclass(frozen=True)
class ExampleView:
    example: ConceptExample
    src: Marked
    tgt: Marked


def example_views(examples) -> list[ExampleView]:
    return [
        ExampleView(
            example=e,
            src=Marked.of(e.source_text, e.src_start, e.src_end),
            tgt=Marked.of(e.target_text, e.tgt_start, e.tgt_end),
        )
        for e in examples
    ]


def variation_examples(
    concept: Concept, per_variation: int = EXAMPLES_PER_VARIATION
) -> list[tuple[Variation, int, list[ExampleView]]]:
    """Each variation (dropped ones last) with its number of examples and the first few of
    them (longest source first, the order the rule generator reads them)."""
    variations = list(
        concept.variations.annotate(n_examples=Count("examples")).order_by(
            "dropped", "-count", "lemma", "id"
        )
    )
    rows: list[tuple[Variation, int, list[ExampleView]]] = []
    for variation in variations:
        examples = (
            ConceptExample.objects.filter(variation=variation)
            .select_related("pair")
            .order_by("-src_tokens", "id")[:per_variation]
        )
        rows.append((variation, variation.n_examples, example_views(examples)))
    return rows


def selection_examples(selection: ExampleSelection) -> list[tuple[SelectedExample, ExampleView]]:
    selected = list(
        SelectedExample.objects.filter(selection=selection)
        .select_related("example__pair", "example__concept", "example__variation")
        .order_by("position")
    )
    return [
        (item, view)
        for item, view in zip(selected, example_views(s.example for s in selected), strict=True)
    ]


# --- For consumers above lexical (challenge sets): plain reads, no user; callers check access.


def _concept_snapshot(concept: Concept) -> dict:
    job = concept.mining_job
    mined = None
    if job is not None:
        corpus = job.corpus
        mined = {
            "mining_job": job.pk,
            "params": job.params,
            "pos_used": job.pos_used,
            "finished_at": job.finished_at.isoformat() if job.finished_at else None,
            "corpus": {"id": corpus.pk, "name": corpus.name, "src_lang": corpus.src_lang,
                       "tgt_lang": corpus.tgt_lang, "source_format": corpus.source_format,
                       "size": corpus.size},
        }  # fmt: skip
    return {
        "id": concept.pk,
        "lemma": concept.lemma,
        "pos": concept.pos,
        "src_lang": concept.src_lang,
        "tgt_lang": concept.tgt_lang,
        "origin": concept.origin,
        "status": concept.status,
        "entropy": concept.entropy,
        "total_count": concept.total_count,
        "note": concept.note,
        "mined": mined,
        "variations": [_variation_snapshot(v) for v in concept.variations.all()],
    }


def _variation_snapshot(variation: Variation) -> dict:
    return {
        "id": variation.pk,
        "label": variation.label,
        "lemma": variation.lemma,
        "surface_forms": variation.surface_forms,
        "count": variation.count,
        "dropped": variation.dropped,
    }


def concept_provenance(concept_ids: list[int]) -> dict[int, dict]:
    """Where each concept came from, as a plain snapshot by id: the mining job with its
    thresholds and the corpus it read (or the imported file, in ``note``), the entropy and every
    variation with its counts (three queries)."""
    concepts = (
        Concept.objects.filter(pk__in=concept_ids)
        .select_related("mining_job__corpus")
        .prefetch_related(Prefetch("variations", Variation.objects.order_by("-count", "lemma")))
    )
    return {concept.pk: _concept_snapshot(concept) for concept in concepts}


def example_provenance(example_ids: list[int]) -> dict[int, dict]:
    """Each example's place in its corpus (pair id and line) and the aligned words' offsets."""
    examples = ConceptExample.objects.filter(pk__in=example_ids).select_related("pair")
    return {
        e.pk: {
            "id": e.pk,
            "variation_id": e.variation_id,
            "sentence_pair": e.pair_id,
            "corpus_line": e.pair.position if e.pair is not None else None,
            "src_span": [e.src_start, e.src_end] if e.src_start is not None else None,
            "tgt_span": [e.tgt_start, e.tgt_end] if e.tgt_start is not None else None,
        }
        for e in examples
    }
