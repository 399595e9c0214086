"""Items from a lexical-selection study (seed 004 §2.3): the sentences with sufficient context.

An item enters the dataset when the majority of the annotators who pass QC picked the attested
variation (the study page's and the DTAiLS export's one definition,
``lexical.studies.selection_study.selectors.dataset_items``). Each becomes a choice item: the
study's question, the concept's variations as choices, the attested variation as the label, so a set
with the ``majority_is_attested`` policy validates it again with its own annotators. The
provenance freezes the study's majority, its votes, the confidence ratings and the agreement,
the target sentence, and where the concept came from (mining job and corpus, or the imported
file). Lexical data is read through ``lexical``'s selectors only.
"""

from __future__ import annotations

from typing import Any

from annotation.protocols.choice import HIGHLIGHT_KEY, valid_highlight
from challenge_sets.sources.base import Candidate, Field, ItemSource, SourceError, int_param
from lexical.concepts.selectors import concept_provenance, example_provenance
from lexical.models import SelectionStudy
from lexical.studies.selection_study import selectors

ORIGIN = "lexical_selection"
MAX_CHOICES = 200


def study_snapshot(study: SelectionStudy) -> dict[str, Any]:
    campaign, selection = study.campaign, study.selection
    return {
        "id": study.pk,
        "campaign": campaign.name,
        "overlap": campaign.overlap,
        "tie_rule": campaign.tie_rule,
        "confidence_labels": list(campaign.confidence_labels or []),
        "selection": {"id": selection.pk, "name": selection.name, "seed": selection.seed,
                      "params": selection.params},
        "created_at": study.created_at.isoformat(),
    }  # fmt: skip


def _human(item: selectors.DatasetItem) -> dict[str, Any]:
    outcome, result = item.outcome, item.result
    labels = dict(enumerate(item.confidence_labels, start=1))
    return {
        "majority": outcome.majority,
        "majority_votes": outcome.majority_votes,
        "votes": item.votes,
        "counts": dict(sorted(outcome.counts.items())),
        "tie": outcome.tie,
        "n_counted": len(result.counted),
        "excluded": dict(sorted(result.excluded.items())),
        "agreement": outcome.agreement,
        "tie_broken": outcome.tie_broken,
        "confidence": {
            "by_annotator": item.confidences,
            "labels": {
                who: labels.get(v) if v is not None else None for who, v in item.confidences.items()
            },
            "mean": item.mean_confidence,
            "scale": list(item.confidence_labels),
        },
    }


def item_candidate(
    study: SelectionStudy,
    snapshot: dict[str, Any],
    item: selectors.DatasetItem,
    concepts: dict[int, dict],
    examples: dict[int, dict],
) -> Candidate:
    result, meta, votes = item.result, item.meta, item.outcome.votes
    concept = concepts.get(votes.concept_id or -1) or {
        "id": votes.concept_id,
        "lemma": votes.concept,
        "pos": str(meta.get("pos", "")),
    }  # the concept was deleted since the study: what the item recorded of it
    highlight = valid_highlight(meta.get(HIGHLIGHT_KEY), result.source)
    return Candidate(
        source=result.source,
        src_lang=result.src_lang,
        tgt_lang=result.tgt_lang,
        origin=ORIGIN,
        origin_ref=f"study:{study.pk}:item:{result.item_id}",
        question=result.question,
        choices=tuple(result.choices),
        attested=votes.attested or "",
        provenance={
            "kind": ORIGIN,
            "study": snapshot,
            "study_item": {"id": result.item_id, "doc_id": result.doc_id,
                           "seg_id": result.seg_id},
            "concept": concept,
            "example": examples.get(votes.example_id or -1, {"id": votes.example_id}),
            "target_text": str(meta.get("target_text", "")),
            HIGHLIGHT_KEY: list(highlight) if highlight else None,
            "study_result": _human(item),
        },
    )  # fmt: skip


def _study_label(study: SelectionStudy) -> str:
    selection = study.selection
    return f"#{study.pk} {study.campaign.name} ({selection.src_lang}→{selection.tgt_lang})"


class LexicalStudySource(ItemSource):
    name = ORIGIN
    label = "Lexical-selection study (sufficient context)"
    fields = (
        Field("study", "Lexical-selection study", "choice",
              help="Its sentences whose majority chose the attested variation, as choice "
                   "items with the study's votes, confidence and agreement."),
    )  # fmt: skip

    def choices(self, field_name: str) -> list[tuple[str, str]]:
        return [(str(s.pk), _study_label(s)) for s in selectors.recent_studies(MAX_CHOICES)]

    def candidates(self, params: dict[str, Any]) -> list[Candidate]:
        pk = int_param(params, "study", high=2**62)
        study = selectors.study_by_pk(pk)
        if study is None:
            raise SourceError(f"no lexical-selection study #{pk}")
        items = selectors.dataset_items(study)
        if not items:
            raise SourceError(
                f"study #{pk} {study.campaign.name!r} has no item with sufficient context yet "
                "(complete, and the majority chose the attested variation)"
            )
        concepts = concept_provenance(
            [c for i in items if (c := i.outcome.votes.concept_id) is not None]
        )
        examples = example_provenance(
            [e for i in items if (e := i.outcome.votes.example_id) is not None]
        )
        snapshot = study_snapshot(study)
        return [item_candidate(study, snapshot, i, concepts, examples) for i in items]
