"""Read queries for difficulty datasets and their evaluations (seed 002)."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import QuerySet
from django.utils.text import slugify

from annotation import protocols
from annotation.selectors import campaign_rows
from core.access import is_active_staff, visible_or_404
from difficulty import dec
from difficulty import estimators as est
from difficulty.dataset_format import segment_object
from difficulty.estimators import PairData
from difficulty.models import (
    DifficultyDataset,
    DifficultyEvaluation,
    DifficultyLanguagePair,
    DifficultySegment,
)
from difficulty.releases import judgments as judgment_tables
from engines.models import Engine
from engines.selectors import cost_by_scope

__all__ = [
    "EstimatorOption",
    "comparison_rows",
    "dataset_file_name",
    "dataset_for_user",
    "dataset_jsonl",
    "dataset_overview",
    "datasets_for_user",
    "estimator_options",
    "evaluation_cost",
    "evaluation_for_user",
    "evaluation_tables",
    "evaluations_for_user",
    "human_scores",
    "judgments_by_system",
    "pair_data",
    "result_tables",
    "segments_page",
    "source_campaigns",
]


def datasets_for_user(user) -> QuerySet[DifficultyDataset]:
    # Difficulty datasets are research-lead material: staff only, everyone else gets a 404 so
    # that their existence does not leak.
    if not is_active_staff(user):
        return DifficultyDataset.objects.none()
    return DifficultyDataset.objects.all()


def dataset_for_user(user, pk: int) -> DifficultyDataset:
    """The one permission-checked accessor for datasets (views, API, exports)."""
    return visible_or_404(datasets_for_user(user), pk, "No such difficulty dataset.")


def evaluations_for_user(user) -> QuerySet[DifficultyEvaluation]:
    if not is_active_staff(user):
        return DifficultyEvaluation.objects.none()
    return DifficultyEvaluation.objects.select_related("dataset")


def evaluation_for_user(user, pk: int) -> DifficultyEvaluation:
    """The one permission-checked accessor for evaluations (views, API)."""
    return visible_or_404(evaluations_for_user(user), pk, "No such evaluation.")


def source_campaigns() -> QuerySet:
    """Annotation campaigns a dataset can be built from: those of scored protocols (ESA, MQM)."""
    return campaign_rows().filter(protocol__in=protocols.scored())


def human_scores(
    language_pair: DifficultyLanguagePair, include_references: bool
) -> tuple[np.ndarray, tuple[str, ...]]:
    """The pair's score matrix restricted to the evaluated systems, and their names."""
    matrix = language_pair.score_matrix()
    systems = [s for s in language_pair.systems.all() if include_references or not s.is_reference]
    columns = [s.column for s in systems]
    return matrix[:, columns], tuple(s.name for s in systems)


def judgments_by_system(
    language_pair: DifficultyLanguagePair, kind: str = "z", include_repeats: bool = False
) -> dict[str, np.ndarray]:
    """Each system's individual judgments of the pair, by system name in column order: ``kind``
    ``"z"`` (standardised per annotator) or ``"raw"`` (the release's scale; a WMT DA judgments
    file has none), judgments missing that kind left out, repeated items (WMT DA ``REPEAT``)
    left out unless ``include_repeats``. Every system is a key, references included (see
    ``DifficultySystem.is_reference``); a pair imported without judgments maps each to an empty
    array. One query."""
    names = list(language_pair.systems.order_by("column").values_list("name", flat=True))
    return judgment_tables.by_system(
        language_pair.judgment_table(), names, kind=kind, include_repeats=include_repeats
    )


def pair_data(
    dataset: DifficultyDataset, *, include_references: bool = False, with_extra: bool = False
) -> list[PairData]:
    """Everything estimators and DEC read, one :class:`PairData` per language pair."""
    pairs = []
    language_pairs = dataset.language_pairs.defer("judgments").prefetch_related("systems")
    for language_pair in language_pairs.order_by("code"):
        human, systems = human_scores(language_pair, include_references)
        fields = ["row", "source", "source_key"]
        if with_extra:
            fields += ["extra", "line_number"]
        rows = list(
            DifficultySegment.objects.filter(language_pair=language_pair)
            .order_by("row")
            .values_list(*fields)
        )
        if [r[0] for r in rows] != list(range(language_pair.n_segments)):
            raise RuntimeError(f"{language_pair}: segment rows do not match the score matrix")
        pairs.append(
            PairData(
                code=language_pair.code,
                src_lang=language_pair.src_lang,
                tgt_lang=language_pair.tgt_lang,
                systems=systems,
                human=human,
                sources=[r[1] for r in rows],
                source_keys=np.array([r[2] for r in rows]),
                extra=[r[3] for r in rows] if with_extra else None,
                line_numbers=[r[4] for r in rows] if with_extra else None,
            )
        )
    return pairs


def dataset_jsonl(dataset: DifficultyDataset, chunk_size: int = 1000) -> Iterator[str]:
    """The dataset as the JSONL its import reads, one segment per line (pairs by code, rows in
    order): importing the download gives the same dataset."""
    segments = (
        DifficultySegment.objects.filter(dataset=dataset)
        .select_related("language_pair")
        .order_by("language_pair__code", "row")
    )
    for segment in segments.iterator(chunk_size=chunk_size):
        obj = segment_object(
            lp=segment.language_pair.code,
            source=segment.source,
            scores=segment.scores,
            translations=segment.translations,
            segment_key=segment.segment_key,
            doc_id=segment.doc_id,
            domain=segment.domain,
            reference=segment.reference,
            extra=segment.extra,
        )
        yield json.dumps(obj, ensure_ascii=False) + "\n"


def dataset_file_name(dataset: DifficultyDataset) -> str:
    return f"{slugify(dataset.name) or 'dataset'}.jsonl"


def dataset_overview(dataset: DifficultyDataset) -> list[dict[str, Any]]:
    """Per language pair: size, systems (references marked) and the evaluated cells' scores."""
    overview = []
    language_pairs = dataset.language_pairs.defer("judgments").prefetch_related("systems")
    for language_pair in language_pairs.order_by("code"):
        human, systems = human_scores(language_pair, include_references=False)
        block = dec.LanguagePairBlock(language_pair.code, human, np.zeros(human.shape[0]), systems)
        summary = dec.full_set_scores([block], perfect=dataset.perfect_score).per_lp[
            language_pair.code
        ]
        overview.append(
            {
                "language_pair": language_pair,
                "systems": list(language_pair.systems.all()),
                "n_evaluated": len(systems),
                "n_references": sum(s.is_reference for s in language_pair.systems.all()),
                "avg_score": summary["avg_score"],
                "pct_perfect": summary["pct_perfect"],
                "n_cells": int((~np.isnan(human)).sum()),
            }
        )
    return overview


def segments_page(
    dataset: DifficultyDataset, language_pair_code: str | None = None
) -> QuerySet[DifficultySegment]:
    segments = DifficultySegment.objects.filter(dataset=dataset).select_related("language_pair")
    if language_pair_code:
        segments = segments.filter(language_pair__code=language_pair_code)
    return segments.order_by("language_pair__code", "row")


def comparison_rows(dataset: DifficultyDataset) -> list[dict[str, Any]]:
    """Every estimator of every finished evaluation of ``dataset``, best DEC first."""
    rows = []
    for evaluation in dataset.evaluations.filter(status=DifficultyEvaluation.Status.DONE):
        details = evaluation.results.get("details", {})
        for name, result in evaluation.results.get("estimators", {}).items():
            rows.append(
                {
                    "evaluation": evaluation,
                    "estimator": name,
                    **result,
                    "dec_ci": details.get(name, {}).get("dec_ci"),
                }
            )
    rows.sort(key=lambda r: math.inf if r["dec"] is None else -r["dec"])
    return rows


@dataclass(frozen=True)
class EstimatorOption:
    name: str
    description: str
    available: bool
    reason: str = ""


def _numeric(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    return isinstance(value, dict) and any(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value.values()
    )


def estimator_options(dataset: DifficultyDataset) -> list[EstimatorOption]:
    """Every estimator an evaluation of ``dataset`` may use (the evaluate form's boxes, the
    API's ``estimator_options``), unavailable ones with the reason."""

    pairs = list(dataset.language_pairs.values_list("src_lang", "tgt_lang"))
    textless = dataset.segments.filter(source="").exists()
    options = []
    for name, description in est.LOCAL_ESTIMATORS.items():
        try:
            est.check_estimator(est.parse_estimator(name), pairs, textless=textless)
        except est.EstimatorError as exc:
            options.append(EstimatorOption(name, description, False, str(exc)))
        else:
            options.append(EstimatorOption(name, description, True))
    kinds = {kind: prefix for prefix, (kind, _d) in est.ENGINE_KINDS.items()}
    for engine in Engine.objects.filter(kind__in=list(kinds), enabled=True).order_by("name"):
        if engine.has_capability("difficulty"):
            spec = est.parse_estimator(f"{kinds[engine.kind]}:{engine.name}")
            reason = ""
            if textless:
                reason = "the dataset has segments without source text (WMT DA holds none)"
            options.append(EstimatorOption(spec.name, est.describe(spec), not reason, reason))
    # Offer the extra fields that hold numbers; the first segments tell which do.
    sample = DifficultySegment.objects.filter(dataset=dataset).values_list("extra", flat=True)[:50]
    numeric = sorted(
        {
            k
            for extra in sample
            for k, v in extra.items()
            if _numeric(v) and dataset.is_metric_field(k)
        }
    )
    for field in numeric:
        spec = est.parse_estimator(f"metric:{field}")
        options.append(EstimatorOption(spec.name, est.describe(spec), True))
    return options


GROUP_ORDER = ("Oracle", "Heuristic", "Dataset metric", "LLM judge", "Crowd based", "Random")


def result_tables(results: dict[str, Any]) -> dict[str, Any]:
    """An evaluation's results arranged for display: seed 002 Table 1 rows (grouped, best DEC
    first within a group) or, once the estimators are ranked, Table 7's order (by DEC, each
    row's cluster rank, ``cluster_start`` where a new cluster begins), per-language-pair columns
    in order (``per_lp``: the pair, its DEC and rank), and the subset table."""
    pairs = list(results["dataset"]["language_pairs"])
    details = results["details"]
    clusters = results.get("significance") or {}
    rows = []
    for name, result in results["estimators"].items():
        detail = details[name]
        ci = detail.get("dec_ci") or [None, None]
        dec_per_lp = [result["dec_per_lp"].get(code) for code in pairs]
        rows.append(
            {
                "name": name,
                "group": detail["group"],
                "description": detail["description"],
                "rank": result.get("rank"),
                "dec": result["dec"],
                "ci_low": ci[0],
                "ci_high": ci[1],
                "pearson": result["pearson"],
                "dec_per_lp": dec_per_lp,
                "per_lp": list(
                    zip(pairs, dec_per_lp, _ranks_per_lp(clusters, name, pairs), strict=True)
                ),
                "avg_score": result["avg_score"],
                "pct_perfect": result["pct_perfect"],
                "subset_per_lp": [detail["subset_per_lp"].get(code, {}) for code in pairs],
                "per_system": [
                    (code, system, tau)
                    for code in pairs
                    for system, tau in detail["per_system"].get(code, {}).items()
                ],
                "undefined": detail["undefined"],
            }
        )
    rows.sort(
        key=lambda r: (
            GROUP_ORDER.index(r["group"]) if r["group"] in GROUP_ORDER else len(GROUP_ORDER),
            math.inf if r["dec"] is None else -r["dec"],
        )
    )
    order = clusters.get("order")
    if order:
        rows.sort(key=lambda r: order.index(r["name"]) if r["name"] in order else len(order))
        for before, row in itertools.pairwise(rows):
            row["cluster_start"] = row["rank"] != before["rank"]
    return {
        "pairs": pairs,
        "rows": rows,
        "ranked": bool(order),
        "significance": clusters,
        "full_set": results["dataset"]["full_set"],
        "random_selection": results["random_selection"],
        "settings": results["settings"],
    }


def _ranks_per_lp(clusters: dict[str, Any], name: str, pairs: list[str]) -> list[int | None]:
    per_lp = clusters.get("per_lp", {})
    ranks = []
    for code in pairs:
        ranking = per_lp.get(code, {})
        order = ranking.get("order", [])
        ranks.append(ranking["ranks"][order.index(name)] if name in order else None)
    return ranks


# The page lists this many of each estimator's hardest segments per language pair; the JSON
# download (?format=json) has every selected row.
HARDEST_SHOWN = 20


def evaluation_tables(evaluation: DifficultyEvaluation) -> dict[str, Any]:
    """:func:`result_tables` of a finished evaluation, each estimator row with its hardest
    segments (``row["hardest"]``: per pair, the first :data:`HARDEST_SHOWN` selected segments,
    hardest first, with their mean human score over the evaluated systems). One query."""
    results = evaluation.results
    tables = result_tables(results)
    wanted = {
        (code, row)
        for detail in results["details"].values()
        for code, rows in detail.get("subset_rows", {}).items()
        for row in rows[:HARDEST_SHOWN]
    }
    segments = {
        (segment.language_pair.code, segment.row): segment
        for segment in DifficultySegment.objects.filter(
            dataset_id=evaluation.dataset_id,
            language_pair__code__in={code for code, _ in wanted},
            row__in={row for _, row in wanted},
        ).select_related("language_pair")
    }
    pairs = results["dataset"]["language_pairs"]
    for table_row in tables["rows"]:
        selected = results["details"][table_row["name"]].get("subset_rows", {})
        table_row["hardest"] = [
            {
                "code": code,
                "segments": [
                    (rank, segments[(code, row)], _mean_of(segments[(code, row)], pairs[code]))
                    for rank, row in enumerate(selected.get(code, [])[:HARDEST_SHOWN], start=1)
                    if (code, row) in segments
                ],
                "more": max(0, len(selected.get(code, [])) - HARDEST_SHOWN),
            }
            for code in tables["pairs"]
            if selected.get(code)
        ]
    return tables


def _mean_of(segment: DifficultySegment, pair: dict[str, Any]) -> float | None:
    values = [
        float(segment.scores[system])
        for system in pair["systems"]
        if isinstance(segment.scores.get(system), int | float)
    ]
    return sum(values) / len(values) if values else None


def evaluation_cost(evaluation: DifficultyEvaluation) -> dict[str, Any]:
    """Engine calls and cost of an evaluation, from the engines ledger (its scope)."""
    return cost_by_scope(f"dataset_eval:{evaluation.pk}")
