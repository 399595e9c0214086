"""Reads of selection studies: the permission-checked accessors and the results (majority per
item, Table 2, per-concept breakdown, the human row of a model evaluation), recomputed from the
campaign's judgments on every read through ``annotation.selectors.item_results`` (which counts
only annotators who pass quality control)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from annotation import selectors as annotation_selectors
from annotation.models import Campaign
from annotation.protocols.choice import (
    ATTESTED_KEY,
    HIGHLIGHT_KEY,
    confidence_scale,
    labels,
    valid_highlight,
)
from annotation.selectors import ItemResult
from core.access import visible_or_404
from lexical.access import may_use_lexical
from lexical.models import ConceptExample, ExampleSelection, SelectionStudy
from lexical.studies.selection_study import results
from lexical.studies.selection_study.services import ORIGIN

__all__ = [
    "DatasetItem",
    "HumanRow",
    "StudyResults",
    "dataset_items",
    "human_row",
    "item_votes",
    "pool_size",
    "recent_studies",
    "studies_for_user",
    "study_by_pk",
    "study_for_user",
    "study_results",
]


def studies_for_user(user) -> QuerySet[SelectionStudy]:
    """Staff only, like the selections they are built from."""
    if not may_use_lexical(user):
        return SelectionStudy.objects.none()
    return SelectionStudy.objects.select_related("campaign", "selection", "created_by")


def study_for_user(user, pk: int) -> SelectionStudy:
    """The one permission-checked accessor for studies (pages and API): 404 otherwise."""
    return visible_or_404(studies_for_user(user), pk, "No such selection study.")


def _int_or_none(value: object) -> int | None:
    if type(value) is int:
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def votes_of(result: ItemResult) -> results.ItemVotes:
    """One study item's record: which concept and example, and its passing annotators' labels."""
    choices = result.choices
    labels = tuple(
        choices[index]
        for judgment in result.counted
        for index in judgment.answer.get("selected", [])[:1]
        if isinstance(index, int) and 0 <= index < len(choices)
    )
    meta = result.meta if isinstance(result.meta, dict) else {}
    attested = meta.get(ATTESTED_KEY)
    return results.ItemVotes(
        item_id=result.item_id,
        example_id=_int_or_none(result.origin_ref),
        concept_id=_int_or_none(meta.get("concept_id")),
        concept=str(meta.get("concept", "")),
        attested=attested if isinstance(attested, str) else None,
        labels=labels,
        complete=result.complete,
        n_submitted=result.n_submitted,
        source=result.source,
        highlight=valid_highlight(meta.get(HIGHLIGHT_KEY), result.source),
        choices=tuple(choices),
    )


def item_votes(campaign: Campaign) -> list[results.ItemVotes]:
    """One record per regular study item with the labels its passing annotators chose."""
    return [votes_of(r) for r in annotation_selectors.item_results(campaign, origin=ORIGIN)]


def pool_size(selection: ExampleSelection) -> int:
    """Candidate examples of the selection's concepts (Table 2's "Full Dataset")."""
    return ConceptExample.objects.filter(concept__in=selection.concepts.all()).count()


@dataclass(frozen=True)
class StudyResults:
    study: SelectionStudy
    table2: results.Table2Row
    outcomes: list[results.ItemOutcome]
    concepts: list[results.ConceptRow]
    progress: dict[str, int]
    annotators: int

    @property
    def dataset(self) -> list[results.ItemOutcome]:
        """The items that enter the dataset: complete, majority = attested."""
        return [o for o in self.outcomes if o.sufficient]


def study_results(study: SelectionStudy) -> StudyResults:
    campaign = study.campaign
    outcomes = results.decide_all(item_votes(campaign), campaign.tie_rule)
    return StudyResults(
        study=study,
        table2=results.table2_row(study.selection.tgt_lang, pool_size(study.selection), outcomes),
        outcomes=outcomes,
        concepts=results.per_concept(outcomes),
        progress=annotation_selectors.campaign_progress(campaign),
        annotators=campaign.enrollments.count(),
    )


@dataclass(frozen=True)
class HumanRow:
    """The human reference row of a model evaluation: which study it comes from and the
    accuracy of its majorities over the evaluation's examples."""

    study: SelectionStudy
    accuracy: results.HumanAccuracy

    @property
    def label(self) -> str:
        return f"human (majority of {self.accuracy.annotators_per_item})"


def human_row(selection: ExampleSelection, example_ids: list[int]) -> HumanRow | None:
    """The latest study of ``selection`` with at least one complete item among
    ``example_ids``, as a reference row; ``None`` when there is none."""
    for study in SelectionStudy.objects.filter(selection=selection).select_related("campaign"):
        outcomes = results.decide_all(item_votes(study.campaign), study.campaign.tie_rule)
        accuracy = results.human_accuracy(outcomes, example_ids, study.campaign.overlap)
        if accuracy.examples:
            return HumanRow(study, accuracy)
    return None


# --- For consumers above lexical (challenge sets): plain reads, no user; callers check access.


def recent_studies(limit: int) -> list[SelectionStudy]:
    studies = SelectionStudy.objects.select_related("campaign", "selection")
    return list(studies.order_by("-created_at", "-id")[:limit])


def study_by_pk(pk: int) -> SelectionStudy | None:
    return SelectionStudy.objects.select_related("campaign", "selection").filter(pk=pk).first()


@dataclass(frozen=True)
class DatasetItem:
    """A study item with sufficient context (it enters the DTAiLS dataset), with the QC-passing
    annotators' votes and confidence ratings behind its majority."""

    result: ItemResult
    outcome: results.ItemOutcome
    confidence_labels: tuple[str, ...]

    @property
    def meta(self) -> dict:
        return self.result.meta if isinstance(self.result.meta, dict) else {}

    @property
    def confidences(self) -> dict[str, int | None]:
        """Each counted annotator's confidence (1 = least confident), by pseudonym."""
        counted = sorted(self.result.counted, key=lambda j: j.annotator)
        return {j.annotator: _int_or_none(j.answer.get("confidence")) for j in counted}

    @property
    def votes(self) -> dict[str, str]:
        """Each counted annotator's chosen variation(s), by pseudonym."""
        counted = sorted(self.result.counted, key=lambda j: j.annotator)
        return {
            j.annotator: "|".join(labels(self.result, j.answer.get("selected", [])))
            for j in counted
        }

    @property
    def mean_confidence(self) -> float | None:
        values = [v for v in self.confidences.values() if v is not None]
        return round(sum(values) / len(values), 6) if values else None


def dataset_items(study: SelectionStudy) -> list[DatasetItem]:
    """The study's items with sufficient context, in campaign order: complete, and the majority
    of the annotators who pass QC (under the study's tie rule) chose the attested variation —
    the same definition as the study page and its DTAiLS export."""
    campaign = study.campaign
    scale = tuple(label for _, label in confidence_scale(campaign.confidence_labels or None))
    kept = []
    for result in annotation_selectors.item_results(campaign, origin=ORIGIN):
        outcome = results.decide(votes_of(result), campaign.tie_rule)
        if outcome.sufficient:
            kept.append(DatasetItem(result, outcome, scale))
    return kept
