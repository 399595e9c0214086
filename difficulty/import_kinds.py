"""Difficulty datasets as a kind of background import (ADR 0022): big uploads from the page or
the API are imported by a worker with the same service as small ones."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.urls import reverse

import imports
from difficulty.dataset_format import DatasetFormatError, ReferenceRule
from difficulty.services import (
    DifficultyDatasetError,
    check_dataset_name,
    import_difficulty_file,
)

DATASET_KIND = "difficulty-dataset"


def upload_options(
    data: Mapping[str, Any], reference_rule: ReferenceRule, *, file_format: str, score_kind: str
) -> dict[str, Any]:
    """What an upload asks of the import besides the file (the keywords of
    :func:`dataset_options`), from the page's form or the API's body: ``data`` is its cleaned
    fields; ``file_format`` and ``score_kind`` are named apart because the two spell them
    differently."""
    return {
        "name": data["name"],
        "description": data["description"],
        "reference_rule": reference_rule,
        "perfect_score": data["perfect_score"],
        "source_file_name": data["file"].name,
        "file_format": file_format,
        "language_pair": data["langs"],
        "human_score": data["human_score"].strip(),
        "test_set": data["test_set"].strip(),
        "score_kind": score_kind,
    }


def dataset_options(
    *, name: str, description: str, reference_rule: ReferenceRule, perfect_score: float,
    source_file_name: str, file_format: str = "auto", language_pair: str = "",
    human_score: str = "", test_set: str = "", score_kind: str = "z",
) -> dict[str, Any]:  # fmt: skip
    """What the upload form or API call said, as the job stores it (JSON)."""
    return {
        "name": name,
        "file_format": file_format,
        "language_pair": language_pair,
        "human_score": human_score,
        "test_set": test_set,
        "score_kind": score_kind,
        "description": description,
        "reference_rule": reference_rule.as_dict(),
        "perfect_score": perfect_score,
        "source_file_name": source_file_name,
    }


def _check(options: Mapping[str, Any]) -> None:
    try:
        check_dataset_name(options["name"])
    except DifficultyDatasetError as exc:
        raise imports.ImportRefused([str(exc)]) from None


def _run(lines: Iterable[bytes], options: Mapping[str, Any], created_by, on_written):
    rule = options["reference_rule"]
    try:
        return import_difficulty_file(
            lines,
            name=options["name"],
            # Jobs queued before the page offered formats were JSONL.
            file_format=options.get("file_format", "wmt-jsonl"),
            language_pair=options.get("language_pair", ""),
            # Jobs queued before releases were read carry none of these.
            human_score=options.get("human_score", ""),
            test_set=options.get("test_set", ""),
            score_kind=options.get("score_kind", "z"),
            description=options["description"],
            reference_rule=ReferenceRule(
                names=tuple(rule["names"]), prefixes=tuple(rule["prefixes"])
            ),
            source_file_name=options["source_file_name"],
            perfect_score=options["perfect_score"],
            created_by=created_by,
            on_written=lambda dataset: on_written(dataset, _summary(dataset)),
        )
    except DatasetFormatError as exc:
        more = ["(more errors not shown)"] if exc.truncated else []
        raise imports.ImportRefused(exc.errors + more) from None
    except DifficultyDatasetError as exc:
        raise imports.ImportRefused([str(exc)]) from None


def _summary(dataset) -> str:
    notes = "".join(f"; {line}" for line in dataset.import_report_lines())
    return (
        f"{dataset.n_segments} segments, {dataset.n_language_pairs} language pair(s), "
        f"{dataset.n_systems} systems{notes}"
    )


def register() -> None:
    imports.register(
        imports.ImportKind(
            name=DATASET_KIND,
            label="Difficulty dataset (WMT-style JSONL, Google MQM, mt-metrics-eval, WMT DA)",
            run=_run,
            result_url=lambda pk: reverse("difficulty:dataset_detail", args=[pk]),
            check=_check,
        )
    )
