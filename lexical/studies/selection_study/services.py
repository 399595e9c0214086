"""Creating the lexical-selection study of an example selection (seed 004 §2.3, App. A Fig. 4).

A study is a choice campaign built exactly per the item contract of LEXICAL_STUDIES.md: one
regular item per selected example (question naming the concept, the concept's non-dropped
variations as options, the attested variation and the original translation in ``meta``, hidden
from annotators), overlap 3, per-annotator shuffled item and option order, a confidence scale.

Optional attention checks are *instructed-response* items (ADR 0030): a selection sentence with
the concept's variations as options and a question that names the option to pick. Their answer
is known without knowing the language, so a check never fails a native speaker who disagrees
with the corpus, and they look like the real items to someone clicking through.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from annotation import agreement
from annotation.models import Campaign, Item
from annotation.protocols.choice import ATTESTED_KEY, HIGHLIGHT_KEY, confidence_scale
from annotation.refusals import CampaignImportError
from annotation.services.campaigns import create_campaign
from lexical.models import Concept, ConceptExample, ExampleSelection, SelectionStudy, Variation
from lexical.recruiting import recruiting_settings

__all__ = [
    "CHECK_ORIGIN",
    "DEFAULT_CONFIDENCE_LABELS",
    "MAX_ATTENTION_CHECKS",
    "ORIGIN",
    "SelectionStudyError",
    "StudyParams",
    "create_selection_study",
    "study_items",
]

ORIGIN = "lexical_selection"
CHECK_ORIGIN = "lexical_selection_check"
DEFAULT_OVERLAP = 3
MAX_ATTENTION_CHECKS = 20
# Seed 004 Fig. 4 shows "No idea" and "Likely but uncertain" (the figure is cropped); "Certain"
# completes the scale at the top. Least to most confident, as Campaign.confidence_labels wants.
DEFAULT_CONFIDENCE_LABELS = ("No idea", "Likely but uncertain", "Certain")


class SelectionStudyError(Exception):
    """A study that cannot be created; ``field`` names the input at fault. Nothing is written."""

    def __init__(self, message: str, *, field: str = ""):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class StudyParams:
    name: str
    overlap: int = DEFAULT_OVERLAP
    tie_rule: str = agreement.NO_MAJORITY
    confidence_labels: tuple[str, ...] = DEFAULT_CONFIDENCE_LABELS
    attention_checks: int = 0
    instructions: str = ""
    # Who may join (lexical.recruiting).
    native_speakers: bool = True
    one_study_per_person: bool = False


def default_instructions(selection: ExampleSelection) -> str:
    language = f"the target language ({selection.tgt_lang})"
    return (
        f"In this task you will need to select the best translation of the highlighted word in "
        f"{language} based on the context in the English text. Answer the question as if you "
        f"were translating the English text to {language}. Then rate how confident you are "
        "that you have selected the correct translation."
    )


def question_for(concept: Concept) -> str:
    return (
        f'Please select the most appropriate translation of "{concept.lemma}" based on the '
        "context in the English text."
    )


@dataclass
class _Plan:
    items: list[dict]
    kept: list[tuple[ConceptExample, list[str]]]
    skipped_concepts: list[dict]
    skipped_examples: int


def _choices_by_concept(concepts: list[Concept]) -> dict[int, list[str]]:
    """Non-dropped variation labels per concept, in the canonical (most frequent first) order."""
    out: dict[int, list[str]] = {c.pk: [] for c in concepts}
    for variation in Variation.objects.filter(concept__in=concepts, dropped=False).order_by(
        "concept", "-count", "lemma", "id"
    ):
        out[variation.concept_id].append(variation.label)
    return out


def _example_item(example: ConceptExample, choices: list[str], selection) -> dict:
    concept = example.concept
    has_offsets = example.src_start is not None and example.src_end is not None
    return {
        "doc_id": f"concept-{concept.pk}",
        "seg_id": f"example-{example.pk}",
        "src_lang": selection.src_lang,
        "tgt_lang": selection.tgt_lang,
        "source": example.source_text,
        "target": "",
        "question": question_for(concept),
        "choices": list(choices),
        "origin": ORIGIN,
        "origin_ref": str(example.pk),
        "meta": {
            "concept_id": concept.pk,
            "concept": concept.lemma,
            "pos": concept.pos,
            ATTESTED_KEY: example.variation.label,
            "target_text": example.target_text,
            HIGHLIGHT_KEY: [example.src_start, example.src_end] if has_offsets else None,
        },
    }


def study_items(selection: ExampleSelection) -> _Plan:
    """The regular items of a study of ``selection``, in selection order, and what was left out:
    concepts with fewer than two non-dropped variations (nothing to choose between) and examples
    whose attested variation was dropped (the right answer would not be offered)."""
    examples = [
        s.example
        for s in selection.selected.select_related(
            "example__concept", "example__variation", "example__pair"
        ).order_by("position")
    ]
    concepts = {e.concept_id: e.concept for e in examples}
    choices = _choices_by_concept(list(concepts.values()))
    skipped = [
        {"id": c.pk, "lemma": c.lemma, "variations": len(choices[c.pk])}
        for c in concepts.values()
        if len(choices[c.pk]) < 2
    ]
    skipped_ids = {s["id"] for s in skipped}
    plan = _Plan([], [], skipped, 0)
    for example in examples:
        if example.concept_id in skipped_ids:
            continue
        if example.variation.dropped or example.variation.label not in choices[example.concept_id]:
            plan.skipped_examples += 1
            continue
        plan.items.append(_example_item(example, choices[example.concept_id], selection))
        plan.kept.append((example, choices[example.concept_id]))
    return plan


def _check_items(plan: _Plan, count: int, selection: ExampleSelection, name: str) -> list[dict]:
    """``count`` instructed-response checks on sentences of the study, drawn reproducibly from
    the selection's seed and the study name."""
    rng = random.Random(f"{selection.seed}:{name}")
    indices = rng.sample(range(len(plan.kept)), k=min(count, len(plan.kept)))
    picks = [plan.kept[i] for i in indices]
    while len(picks) < count:  # fewer sentences than checks: reuse them with other answers
        picks.append(plan.kept[rng.randrange(len(plan.kept))])
    items = []
    for n, (example, choices) in enumerate(picks, start=1):
        wanted = rng.choice(choices)
        item = _example_item(example, choices, selection)
        items.append(
            {
                **item,
                "doc_id": "attention-checks",
                "seg_id": f"check-{n}",
                "kind": Item.Kind.ATTENTION_CHECK,
                "question": (
                    f'Attention check: whatever the sentence says, please select "{wanted}" '
                    "for this one."
                ),
                "expected": wanted,
                "origin": CHECK_ORIGIN,
                "origin_ref": f"{example.pk}:{n}",
                "meta": {
                    "concept_id": example.concept_id,
                    "concept": example.concept.lemma,
                    HIGHLIGHT_KEY: item["meta"][HIGHLIGHT_KEY],
                },
            }
        )
    return items


def _validate(selection: ExampleSelection, params: StudyParams) -> None:
    if not params.name.strip():
        raise SelectionStudyError("give the study a name", field="name")
    if Campaign.objects.filter(name=params.name.strip()).exists():
        raise SelectionStudyError(
            f"a campaign named {params.name.strip()!r} already exists; choose another name",
            field="name",
        )
    if not 1 <= params.overlap <= 100:
        raise SelectionStudyError("annotators per item must be 1 to 100", field="overlap")
    if params.tie_rule not in agreement.TIE_RULES:
        raise SelectionStudyError(
            f"tie rule must be one of {', '.join(agreement.TIE_RULES)}", field="tie_rule"
        )
    try:
        confidence_scale(list(params.confidence_labels))
    except ValueError as exc:
        raise SelectionStudyError(str(exc), field="confidence_labels") from None
    if not 0 <= params.attention_checks <= MAX_ATTENTION_CHECKS:
        raise SelectionStudyError(
            f"attention checks must be 0 to {MAX_ATTENTION_CHECKS}", field="attention_checks"
        )
    if not selection.selected.exists():
        raise SelectionStudyError(
            f"selection {selection.name!r} has no examples: there is nothing to annotate",
            field="selection",
        )


def create_selection_study(
    selection: ExampleSelection, params: StudyParams, *, created_by=None
) -> SelectionStudy:
    """Create the choice campaign and its link to ``selection``, all or nothing.

    Raises :class:`SelectionStudyError` (with ``field``) for an empty selection, a selection
    whose concepts all have fewer than two variations left, a name already taken or bad
    settings; concepts with fewer than two non-dropped variations are skipped and listed in
    ``study.params["skipped_concepts"]``.
    """
    _validate(selection, params)
    plan = study_items(selection)
    if not plan.items:
        raise SelectionStudyError(
            f"no example of selection {selection.name!r} can be asked: "
            f"{len(plan.skipped_concepts)} concept(s) have fewer than two variations left and "
            f"{plan.skipped_examples} example(s) use a dropped variation",
            field="selection",
        )
    items = plan.items + _check_items(plan, params.attention_checks, selection, params.name)
    try:
        with transaction.atomic():
            campaign = create_campaign(
                params.name.strip(),
                "choice",
                items,
                src_lang=selection.src_lang,
                tgt_lang=selection.tgt_lang,
                overlap=params.overlap,
                multi_select=False,
                ask_confidence=True,
                confidence_labels=list(params.confidence_labels),
                tie_rule=params.tie_rule,
                shuffle_items=True,
                instructions=params.instructions.strip() or default_instructions(selection),
                created_by=created_by,
                **recruiting_settings(
                    selection.tgt_lang,
                    native_speakers=params.native_speakers,
                    one_study_per_person=params.one_study_per_person,
                ),
            )
            return SelectionStudy.objects.create(
                campaign=campaign,
                selection=selection,
                created_by=created_by,
                params={
                    "items": len(plan.items),
                    "attention_checks": params.attention_checks,
                    "skipped_concepts": plan.skipped_concepts,
                    "skipped_examples": plan.skipped_examples,
                    "native_speakers": params.native_speakers,
                    "one_study_per_person": params.one_study_per_person,
                },
            )
    except CampaignImportError as exc:
        raise SelectionStudyError(
            f"the study items were refused: {exc}", field="selection"
        ) from None
    except IntegrityError:
        # Another request took the name between the check and the insert.
        raise SelectionStudyError(
            f"a campaign named {params.name.strip()!r} already exists; choose another name",
            field="name",
        ) from None
    except ValidationError as exc:
        raise SelectionStudyError(f"the campaign was refused: {'; '.join(exc.messages)}") from None
