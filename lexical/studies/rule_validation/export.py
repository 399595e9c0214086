"""The results tables of a rule-validation study as CSV, one row per figure.

Concept lemmas and generator names come from corpora and users, so every cell goes through
:func:`formats.spreadsheet.guard_cell` (no formulas in a spreadsheet)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from formats.spreadsheet import csv_text
from lexical.studies.rule_validation.results import Share
from lexical.studies.rule_validation.selectors import StudyResults

HEADER = ["table", "row", "measure", "value", "positive", "total", "ties"]


def _share_rows(table: str, row: str, value: Share) -> Iterator[list[Any]]:
    yield [table, row, "micro", value.micro, value.micro_positive, value.micro_total, ""]
    yield [
        table, row, "majority", value.majority, value.majority_positive, value.majority_total,
        value.ties,
    ]  # fmt: skip


def result_rows(results: StudyResults) -> Iterator[list[Any]]:
    yield from _share_rows("table1_mined_variations", "precision", results.precision)
    yield from _share_rows("table1_mined_variations", "recall", results.recall)
    for generator, value in results.rules.items():
        yield from _share_rows("table3_correct_rules", generator, value)
    for family, agreement in results.agreement.items():
        for measure in ("total_agreement", "fleiss_kappa", "pabak"):
            yield [
                "tables4_6_agreement", family, measure, getattr(agreement, measure), "",
                agreement.n_units, "",
            ]  # fmt: skip


def results_csv(results: StudyResults) -> str:
    return csv_text(HEADER, result_rows(results), lineterminator="\n")
