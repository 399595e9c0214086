"""What a ranking ranks: a systems × segments score matrix read from one of four inputs.

* a **difficulty dataset**'s language pair: its human-score matrix, or a per-system extra field
  (``{system: score}`` per segment, e.g. a metric's scores shipped with the release);
* an **annotation campaign**: each item is one (segment, system) cell, its score the mean over
  annotators who pass quality control, read through ``annotation.selectors.item_results`` (the
  one QC-aware reader); ``z`` standardises every judgment by its annotator first (WMT style);
* a **frozen challenge-set version** with its human scores: each item's
  ``human.scores[system]`` (what validation read through the same QC-aware selector);
* a **frozen version scored by a QE engine**: every (item, system translation) is scored by
  the engine in rounds (``ranking.services``); this module lists the cells to score.

Rows of the matrix are systems, columns segments; NaN where a system has no score. A system
never scored is left out (with a note): nothing can rank it.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from annotation import protocols
from annotation.models import Campaign
from annotation.selectors import ItemResult, item_results
from challenge_sets.models import FrozenVersion
from difficulty.models import DifficultyDataset, DifficultyLanguagePair, DifficultySegment
from difficulty.selectors import judgments_by_system
from ranking.stats import zscore_by_annotator

__all__ = [
    "HUMAN",
    "JUDGMENT_SCORES",
    "RAW",
    "Z_SCORE",
    "InputError",
    "QeCell",
    "ScoredInput",
    "campaign_input",
    "check_campaign",
    "dataset_input",
    "dataset_judgments",
    "dataset_language_pair",
    "dataset_score_fields",
    "drop_unscored",
    "human_score_name",
    "judgment_kinds",
    "qe_cells",
    "resolve_dataset_score",
    "version_input",
    "version_items",
    "version_language_pairs",
]

HUMAN = "human"
# Scores read from the individual judgments: rank-sum tests them one by one (WMT21–23), the
# paired tests their per-segment means.
RAW = "raw"
Z_SCORE = "z"
JUDGMENT_SCORES = (RAW, Z_SCORE)
_MAX_NOTED = 5


class InputError(ValueError):
    """The input cannot be ranked as asked; ``field`` names the setting at fault."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


@dataclass
class ScoredInput:
    """Scores ready for ``ranking.stats.rank_systems``.

    ``judgments`` (rank-sum only) holds one array of individual judgments per system; ``None``
    means the test runs on each system's per-segment scores, as WMT's crowd-DA releases do.
    """

    systems: list[str]
    scores: np.ndarray
    segment_keys: list[str]
    description: str
    judgments: list[np.ndarray] | None = None
    notes: list[str] = field(default_factory=list)


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_MAX_NOTED])
    return shown + (f" and {len(names) - _MAX_NOTED} more" if len(names) > _MAX_NOTED else "")


def drop_unscored(scored: ScoredInput) -> ScoredInput:
    """Leave out systems without a single score, saying which."""
    keep = ~np.all(np.isnan(scored.scores), axis=1) if scored.scores.size else np.array([])
    if keep.size and not keep.all():
        dropped = [s for s, k in zip(scored.systems, keep, strict=True) if not k]
        scored.notes.append(f"left out (no score): {_listed(dropped)}")
        scored.systems = [s for s, k in zip(scored.systems, keep, strict=True) if k]
        scored.scores = scored.scores[keep]
        if scored.judgments is not None:
            scored.judgments = [j for j, k in zip(scored.judgments, keep, strict=True) if k]
    if len(scored.systems) < 2:
        raise InputError(
            "input",
            f"{scored.description}: {len(scored.systems)} scored system(s); ranking "
            "needs at least two",
        )
    return scored


# --- difficulty datasets ---------------------------------------------------------------------


def dataset_language_pair(dataset: DifficultyDataset, code: str) -> DifficultyLanguagePair:
    """The pair ``code`` of the dataset, or its only pair when ``code`` is empty."""
    pairs = list(dataset.language_pairs.order_by("code"))
    if code:
        for pair in pairs:
            if pair.code == code:
                return pair
        codes = ", ".join(p.code for p in pairs) or "none"
        raise InputError("language_pair", f"{dataset.name} has no language pair {code!r} ({codes})")
    if len(pairs) != 1:
        codes = ", ".join(p.code for p in pairs) or "none"
        raise InputError(
            "language_pair", f"{dataset.name} has several language pairs ({codes}): choose one"
        )
    return pairs[0]


def judgment_kinds(pair: DifficultyLanguagePair) -> list[str]:
    """``raw`` and/or ``z`` where the pair's import kept individual judgments of that kind (a
    WMT DA judgments file has z only)."""
    if not pair.n_judgments:
        return []
    table = pair.judgment_table()
    return [kind for kind in JUDGMENT_SCORES if np.isfinite(table[kind]).any()]


def dataset_score_fields(dataset: DifficultyDataset) -> list[str]:
    """Scores a ranking of the dataset can use: the human score, the individual judgments (raw,
    z) where some pair kept them, then its extra fields."""
    kinds: set[str] = set()
    for pair in dataset.language_pairs.filter(n_judgments__gt=0):
        kinds.update(judgment_kinds(pair))
    extra = [f for f in dataset.extra_fields if dataset.is_metric_field(f) and f not in kinds]
    return [HUMAN, *(k for k in JUDGMENT_SCORES if k in kinds), *extra]


def human_score_name(dataset: DifficultyDataset) -> str:
    """The release's name of the dataset's human score (``mqm``, ``wmt-z``...), if it says."""
    name = dataset.import_report.get("human_score") if dataset.import_report else None
    return name if isinstance(name, str) else ""


def resolve_dataset_score(
    dataset: DifficultyDataset, pair: DifficultyLanguagePair, score: str
) -> str:
    """``human`` for the dataset's human score (also under its release name), ``raw``/``z`` for
    the pair's individual judgments, else the extra field; refuses a score it does not have."""
    score = score or HUMAN
    if score == HUMAN or (score == human_score_name(dataset) and score not in dataset.extra_fields):
        return HUMAN
    kinds = judgment_kinds(pair)
    if score in kinds:
        return score
    extra = [f for f in dataset.extra_fields if dataset.is_metric_field(f)]
    if score in extra:
        return score
    offered = [HUMAN + (f" ({human_score_name(dataset)})" if human_score_name(dataset) else "")]
    offered += [*kinds, *extra]
    raise InputError(
        "score", f"{dataset.name} {pair.code} has no score {score!r} (scores: {', '.join(offered)})"
    )


def _judgment_matrix(pair: DifficultyLanguagePair, kind: str, columns: list[int]) -> np.ndarray:
    """Per (system, segment): the mean of its individual judgments of ``kind`` (repeated items,
    WMT DA's consistency checks, left out as ``judgments_by_system`` leaves them out)."""
    table = pair.judgment_table()
    table = table[np.isfinite(table[kind]) & ~table["repeat"]]
    lookup = np.full(max(int(table["column"].max(initial=0)), *columns, 0) + 1, -1)
    lookup[columns] = np.arange(len(columns))  # matrix column -> row of ours; -1: not ranked
    system = lookup[table["column"]]
    table, system = table[system >= 0], system[system >= 0]
    sums = np.zeros((len(columns), pair.n_segments))
    counts = np.zeros((len(columns), pair.n_segments))
    np.add.at(sums, (system, table["row"]), table[kind])
    np.add.at(counts, (system, table["row"]), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1.0), np.nan)


def _extra_matrix(pair: DifficultyLanguagePair, field_name: str, systems: list[str]) -> np.ndarray:
    columns = {name: k for k, name in enumerate(systems)}
    matrix = np.full((len(systems), pair.n_segments), np.nan)
    rows = DifficultySegment.objects.filter(language_pair=pair).order_by("row")
    for row, line, extra in rows.values_list("row", "line_number", "extra").iterator():
        value = (extra or {}).get(field_name)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise InputError(
                "score", f"{field_name!r} of line {line or row + 1} is not one score per system"
            )
        for system, number in value.items():
            if system not in columns or number is None:
                continue
            if isinstance(number, bool) or not isinstance(number, int | float):
                raise InputError(
                    "score",
                    f"{field_name!r} of line {line or row + 1} has {number!r} for "
                    f"{system}; a number is needed",
                )
            if math.isfinite(number):
                matrix[columns[system], row] = float(number)
    return matrix


def dataset_input(
    dataset: DifficultyDataset, code: str, score: str, *, include_references: bool = False
) -> ScoredInput:
    """A dataset pair's scores for every system (human references only when asked): its human
    score, the per-segment means of its individual judgments (``raw``/``z``, which rank-sum
    then tests one by one, read through ``difficulty.selectors.judgments_by_system``), or a
    per-system extra field."""
    pair = dataset_language_pair(dataset, code)
    score = resolve_dataset_score(dataset, pair, score)
    systems = [
        s for s in pair.systems.order_by("column") if include_references or not s.is_reference
    ]
    names = [s.name for s in systems]
    judgments = None
    if score == HUMAN:
        matrix = pair.score_matrix()[:, [s.column for s in systems]].T.copy()
        label = human_score_name(dataset)
    elif score in JUDGMENT_SCORES:
        matrix = _judgment_matrix(pair, score, [s.column for s in systems])
        by_system = judgments_by_system(pair, kind=score)
        judgments = [by_system[name] for name in names]
        label = f"individual judgments, {score}"
    else:
        matrix = _extra_matrix(pair, score, names)
        label = score
    description = f"{dataset.name} {pair.code}" + (f" ({label})" if label else "")
    segment_keys = [str(k) for k in range(pair.n_segments)]
    scored = ScoredInput(names, matrix, segment_keys, description, judgments=judgments)
    if not include_references and len(systems) < pair.systems.count():
        references = [s.name for s in pair.systems.filter(is_reference=True)]
        scored.notes.append(f"human references left out: {_listed(references)}")
    return drop_unscored(scored)


# --- annotation campaigns --------------------------------------------------------------------


def _campaign_pair(campaign: Campaign, result: ItemResult) -> str:
    src = result.src_lang or campaign.src_lang
    tgt = result.tgt_lang or campaign.tgt_lang
    return f"{src}-{tgt}"


def _campaign_results(campaign: Campaign, code: str) -> list[ItemResult]:
    results = list(item_results(campaign))
    pairs = sorted({_campaign_pair(campaign, r) for r in results})
    if code:
        if code not in pairs:
            raise InputError(
                "language_pair",
                f"campaign {campaign.name} has no items in {code!r} "
                f"({', '.join(pairs) or 'no items'})",
            )
        return [r for r in results if _campaign_pair(campaign, r) == code]
    if len(pairs) > 1:
        raise InputError(
            "language_pair",
            f"campaign {campaign.name} has items in several language pairs ({', '.join(pairs)}): "
            "choose one",
        )
    return results


def _z_scores(results: Iterable[ItemResult]) -> dict[tuple[int, int], float]:
    """Per (item, judgment index): the counted judgment's score standardised by its annotator
    over all their counted judgments here (``ranking.stats.zscore_by_annotator``)."""
    keys, scores, annotators = [], [], []
    for result in results:
        for index, judgment in enumerate(result.judgments):
            if judgment.counted and judgment.score is not None:
                keys.append((result.item_id, index))
                scores.append(judgment.score)
                annotators.append(judgment.annotator)
    if not keys:
        return {}
    z = zscore_by_annotator(np.array(scores, dtype=np.float64), np.array(annotators))
    return {key: float(value) for key, value in zip(keys, z, strict=True) if not math.isnan(value)}


def _judgment_scores(result: ItemResult, z: dict[tuple[int, int], float] | None) -> list[float]:
    if z is None:
        return [j.score for j in result.judgments if j.counted and j.score is not None]
    return [
        z[key] for index in range(len(result.judgments)) if (key := (result.item_id, index)) in z
    ]


CAMPAIGN_SCORES = {
    HUMAN: "mean score of QC-passed annotators",
    RAW: "QC-passed judgments",
    Z_SCORE: "QC-passed judgments, z-scored per annotator",
}


def check_campaign(campaign: Campaign, score: str) -> None:
    if campaign.protocol not in protocols.scored():
        raise InputError(
            "campaign", f"campaign {campaign.name} uses {campaign.protocol}, which has no scores"
        )
    if score not in CAMPAIGN_SCORES:
        raise InputError("score", f"a campaign's score is one of {', '.join(CAMPAIGN_SCORES)}")


def campaign_input(campaign: Campaign, code: str, score: str) -> ScoredInput:
    """A scored campaign's items as (segment, system) cells: the mean of the counted judgments
    (raw 0–100, or z-scored per annotator); with ``raw`` or ``z``, every counted judgment too,
    for rank-sum."""
    check_campaign(campaign, score)
    results = _campaign_results(campaign, code)
    z = _z_scores(results) if score == Z_SCORE else None
    segments: dict[tuple[str, str, str], int] = {}
    cells: dict[tuple[int, str], tuple[int, list[float]]] = {}
    unnamed = 0
    for result in results:
        if not result.system:
            unnamed += 1
            continue
        values = _judgment_scores(result, z)
        if not values:
            continue
        column = segments.setdefault((result.doc_id, result.seg_id, result.source), len(segments))
        if (column, result.system) in cells:
            first = cells[(column, result.system)][0]
            raise InputError(
                "campaign",
                f"items {first} and {result.item_id} both hold {result.system}'s "
                f"translation of segment {result.seg_id!r} ({result.doc_id!r})",
            )
        cells[(column, result.system)] = (result.item_id, values)
    systems = sorted({system for _, system in cells})
    row_of = {system: k for k, system in enumerate(systems)}
    matrix = np.full((len(systems), len(segments)), np.nan)
    judgments: dict[str, list[float]] = defaultdict(list)
    for (column, system), (_, values) in cells.items():
        matrix[row_of[system], column] = float(np.mean(values))
        judgments[system].extend(values)
    keys = [f"{doc}#{seg}" for doc, seg, _ in segments]
    scored = ScoredInput(
        systems, matrix, keys, f"campaign {campaign.name} ({CAMPAIGN_SCORES[score]})"
    )
    if score in JUDGMENT_SCORES:
        scored.judgments = [np.array(judgments[s], dtype=np.float64) for s in systems]
    if unnamed:
        scored.notes.append(f"{unnamed} item(s) without a system name left out")
    return drop_unscored(scored)


# --- frozen challenge-set versions -----------------------------------------------------------


def version_items(version: FrozenVersion) -> list[dict[str, Any]]:
    """The version's items as frozen (canonical JSONL written by ``challenge_sets.versions``)."""
    return [json.loads(line) for line in version.items_jsonl.splitlines() if line.strip()]


def _pair_of(item: dict[str, Any]) -> str:
    return f"{item.get('src_lang', '')}-{item.get('tgt_lang', '')}"


def version_language_pairs(version: FrozenVersion) -> list[str]:
    return sorted({_pair_of(i) for i in version_items(version) if i.get("translations")})


def _version_scope(version: FrozenVersion, code: str) -> list[dict[str, Any]]:
    items = [i for i in version_items(version) if isinstance(i.get("translations"), dict)]
    items = [i for i in items if i["translations"]]
    pairs = sorted({_pair_of(i) for i in items})
    label = f"{version.challenge_set.name} v{version.number}"
    if not items:
        raise InputError("version", f"{label} has no item with translations to rank")
    if code:
        if code not in pairs:
            raise InputError(
                "language_pair", f"{label} has no items in {code!r} ({', '.join(pairs)})"
            )
        return [i for i in items if _pair_of(i) == code]
    if len(pairs) > 1:
        raise InputError(
            "language_pair",
            f"{label} has items in several language pairs ({', '.join(pairs)}): choose one",
        )
    return items


def _version_systems(items: list[dict[str, Any]]) -> list[str]:
    return sorted({str(system) for item in items for system in item["translations"]})


def version_input(version: FrozenVersion, code: str) -> ScoredInput:
    """Each item's human score per system translation, as validation recorded it."""
    items = _version_scope(version, code)
    systems = _version_systems(items)
    row_of = {system: k for k, system in enumerate(systems)}
    matrix = np.full((len(systems), len(items)), np.nan)
    for column, item in enumerate(items):
        scores = (item.get("human") or {}).get("scores") or {}
        for system, value in scores.items():
            number = (
                value if isinstance(value, int | float) and not isinstance(value, bool) else None
            )
            if system in row_of and number is not None and math.isfinite(number):
                matrix[row_of[system], column] = float(number)
    label = f"{version.challenge_set.name} v{version.number}"
    keys = [str(item.get("id", k)) for k, item in enumerate(items)]
    return drop_unscored(ScoredInput(systems, matrix, keys, f"{label} (human scores)"))


@dataclass(frozen=True)
class QeCell:
    """One (system, item) translation for the QE engine to score."""

    row: int
    column: int
    source: str
    translation: str


def qe_cells(
    version: FrozenVersion, code: str
) -> tuple[list[str], list[str], list[QeCell], tuple[str, str]]:
    """(systems, segment keys, every cell to score in a fixed order, (src, tgt) languages)."""
    items = _version_scope(version, code)
    systems = _version_systems(items)
    if len(systems) < 2:
        label = f"{version.challenge_set.name} v{version.number}"
        raise InputError(
            "version", f"{label} has translations by {len(systems)} system(s); ranking needs two"
        )
    row_of = {system: k for k, system in enumerate(systems)}
    cells = [
        QeCell(row_of[str(system)], column, str(item.get("source", "")), str(text))
        for column, item in enumerate(items)
        for system, text in sorted(item["translations"].items())
    ]
    keys = [str(item.get("id", k)) for k, item in enumerate(items)]
    first = items[0]
    return systems, keys, cells, (str(first.get("src_lang", "")), str(first.get("tgt_lang", "")))


def dataset_judgments(
    dataset: DifficultyDataset, code: str, score: str
) -> tuple[ScoredInput, np.ndarray]:
    """A dataset pair as a replay needs it: (systems, segments, raters) recorded scores over the
    segments every system was scored on (a replay needs a fully crossed grid). ``human`` (or an
    extra field) gives one score a cell; ``raw``/``z`` one per individual judgment (repeated
    items left out), so that a replayed annotation reveals one rater's score."""
    scored = dataset_input(dataset, code, score)
    crossed = ~np.isnan(scored.scores).any(axis=0)
    if not crossed.any():
        raise InputError("score", f"{scored.description}: no segment has a score for every system")
    pair = dataset_language_pair(dataset, code)
    resolved = resolve_dataset_score(dataset, pair, score)
    if resolved not in JUDGMENT_SCORES:
        return scored, scored.scores[:, crossed, None]
    table = pair.judgment_table()
    table = table[np.isfinite(table[resolved]) & ~table["repeat"]]
    column = dict(pair.systems.values_list("name", "column"))
    row_of = {column[name]: k for k, name in enumerate(scored.systems)}  # matrix column -> ours
    cells: dict[tuple[int, int], list[float]] = defaultdict(list)
    for row, column, value in zip(
        table["row"].tolist(), table["column"].tolist(), table[resolved].tolist(), strict=True
    ):
        if column in row_of:
            cells[(row_of[column], row)].append(value)
    raters = max((len(v) for v in cells.values()), default=1)
    cube = np.full((len(scored.systems), pair.n_segments, raters), np.nan)
    for (system, segment), values in cells.items():
        cube[system, segment, : len(values)] = values
    return scored, cube[:, crossed]
