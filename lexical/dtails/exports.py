"""DTAiLS exports: an example selection, and a finished lexical-selection study (seed 004 §2.2).

A study is an ``annotation.Campaign`` with protocol ``choice`` whose regular items follow the
item contract (docs/LEXICAL_STUDIES: ``origin="lexical_selection"``, ``meta`` with concept,
attested, target_text). Human results are read through ``annotation.selectors.item_results``
only, so the QC verdicts and the campaign's tie rule are the dashboard's.

The released-shape CSV is byte-compatible with the paper's files and is NOT guarded against
spreadsheet formulas (that would change the data); the extended CSV is, like every other
export of the platform that a person opens in a spreadsheet.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from annotation.models import Campaign, Item
from annotation.protocols.choice import labels
from annotation.selectors import ItemResult, item_results
from formats.spreadsheet import csv_text
from lexical.dtails.format import DtailsRow, write_csv
from lexical.models import ExampleSelection, SelectedExample
from lexical.studies.selection_study import results
from lexical.studies.selection_study.selectors import votes_of

STUDY_ORIGIN = "lexical_selection"


# --- selections ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SelectionExport:
    rows: list[DtailsRow]
    skipped: int
    """Examples left out: their variation is dropped, or their concept has under 2 variations."""


def selection_rows(selection: ExampleSelection) -> SelectionExport:
    """The selection's examples in selection order, label = the attested variation.

    Variations are listed as the imported file listed them (``params["variation_order"]``),
    otherwise the concept's non-dropped variations in canonical order.
    """
    order = (selection.params or {}).get("variation_order") or {}
    picked = (
        SelectedExample.objects.filter(selection=selection)
        .select_related("example__concept", "example__variation", "example__pair")
        .prefetch_related("example__concept__variations")
        .order_by("position")
    )
    rows: list[DtailsRow] = []
    skipped = 0
    for selected in picked:
        example = selected.example
        concept = example.concept
        listed = order.get(str(concept.pk)) or [
            v.label for v in concept.variations.all() if not v.dropped
        ]
        label = example.variation.label
        if example.variation.dropped or len(listed) < 2 or label not in listed:
            skipped += 1
            continue
        rows.append(
            DtailsRow(concept.lemma, example.source_text, example.target_text, tuple(listed), label)
        )
    return SelectionExport(rows, skipped)


def selection_csv(selection: ExampleSelection) -> bytes:
    return write_csv(selection_rows(selection).rows)


# --- studies ---------------------------------------------------------------------------------


def is_study(campaign: Campaign) -> bool:
    """A choice campaign with at least one lexical-selection item."""
    return (
        campaign.protocol == "choice"
        and Item.objects.filter(campaign=campaign, origin=STUDY_ORIGIN).exists()
    )


def study_results(campaign: Campaign) -> Iterator[ItemResult]:
    return item_results(campaign, origin=STUDY_ORIGIN)


def sufficient_context(result: ItemResult, tie_rule: str) -> bool:
    """The study page's definition (``lexical.studies.selection_study.results``): the item is
    complete and the QC-passing majority, under the campaign's tie rule, chose the attested
    variation."""
    return results.decide(votes_of(result), tie_rule).sufficient is True


def _released_row(result: ItemResult) -> DtailsRow:
    meta = result.meta or {}
    return DtailsRow(
        str(meta.get("concept", "")),
        result.source,
        str(meta.get("target_text", "")),
        tuple(result.choices),
        str(meta.get("attested", "")),
    )


def study_released_csv(campaign: Campaign) -> bytes:
    """The items with sufficient context, in the released DTAiLS shape (the expert dataset)."""
    rows = study_results(campaign)
    return write_csv(_released_row(r) for r in rows if sufficient_context(r, campaign.tie_rule))


EXTENDED_HEADER = (
    "item_id", "doc_id", "seg_id", "concept", "pos", "source language text",
    "target language text", "variations", "attested", "votes", "confidences", "n_counted",
    "excluded", "majority", "majority_votes", "tie", "sufficient_context", "item_agreement",
)  # fmt: skip


def _vote(result: ItemResult, answer: dict) -> str:
    return "|".join(labels(result, answer.get("selected", [])))


def extended_row(result: ItemResult, tie_rule: str) -> list[object]:
    """Every vote of one item: counted votes and confidences by annotator pseudonym (sorted),
    the annotators left out with their QC verdict, and the item's majority and agreement."""
    meta = result.meta or {}
    counted = sorted(result.counted, key=lambda j: j.annotator)
    votes = {j.annotator: _vote(result, j.answer) for j in counted}
    confidences = {j.annotator: j.answer.get("confidence") for j in counted}
    excluded = dict(sorted(result.excluded.items()))
    return [
        result.item_id, result.doc_id, result.seg_id, meta.get("concept", ""),
        meta.get("pos", ""), result.source, meta.get("target_text", ""),
        str(list(result.choices)), meta.get("attested", ""),
        json.dumps(votes, ensure_ascii=False), json.dumps(confidences, ensure_ascii=False),
        result.n_judgments, json.dumps(excluded, ensure_ascii=False),
        result.majority if result.majority is not None else "",
        result.extra.get("majority_votes", 0), result.extra.get("tie", False),
        sufficient_context(result, tie_rule),
        "" if result.agreement is None else round(result.agreement, 6),
    ]  # fmt: skip


def study_extended_csv(campaign: Campaign) -> bytes:
    """Every regular lexical-selection item with its votes (formula-guarded cells)."""
    rows = (extended_row(result, campaign.tie_rule) for result in study_results(campaign))
    return csv_text(EXTENDED_HEADER, rows, lineterminator="\n").encode("utf-8")
