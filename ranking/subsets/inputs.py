"""What a discrimination analysis measures, read as a full set of scores and its subsets.

Seed 000 App. A compares a subset with the whole test set it was drawn from and with random
subsets of the same size, so every subject needs *the full set with several systems scored on
every segment*. Three subjects have one:

* a **frozen challenge-set version** whose items were taken from a difficulty dataset (their
  provenance keeps the dataset id and the segment's row and id): the full set is that dataset's
  language pair, the subset the version's segments. Items from elsewhere (search runs,
  MT-breaker, JSONL files) carry the scores of the systems that validation saw, not a full set
  to compare with: such a version is refused, naming where its items came from;
* a **difficulty dataset's hardest segments** by one estimator of a finished DEC evaluation (the
  estimates it stored), or by the human-score oracle (each segment's mean human score over the
  evaluated systems, seed 002 App. E "oracle-src-lang"): a curve over the hardest 5 % … 50 %;
* an **MT-breaker comparison** whose selected texts were scored for several translators: the
  targets of a Multi run, or the translators of a transfer of the comparison's texts, in one
  target language (QE quality), or the people's scores of the selected steps. The full set is
  every method's texts; each method's texts are a subset (seed 001 §3.3, Table 4).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from challenge_sets.models import FrozenVersion
from difficulty import dec
from difficulty.estimators import EstimatorError, parse_estimator
from difficulty.models import (
    DifficultyDataset,
    DifficultyEstimate,
    DifficultyEvaluation,
    DifficultyLanguagePair,
    DifficultySegment,
    matrix_from_bytes,
)
from ranking import inputs as ranking_inputs
from ranking.inputs import InputError
from ranking.subsets.gaps import model_gaps
from search.breaker import selectors as breaker_selectors
from search.breaker.methods import spec as method_spec
from search.models import BreakerRun, TransferResult

__all__ = [
    "HUMAN",
    "ORACLE",
    "QE",
    "InputError",
    "Subject",
    "Subset",
    "breaker_subject",
    "hardest_subject",
    "version_refusal",
    "version_subject",
]

ORACLE = "oracle"
HUMAN = "human"
QE = "qe"
DATASET_ORIGIN = "difficulty_dataset"  # challenge_sets.sources.difficulty_dataset.ORIGIN
_SHOWN = 5


@dataclass
class Subset:
    """Segment columns of the full set: hardest first (a curve over fractions) or fixed."""

    label: str
    columns: list[int]
    curve: bool


@dataclass
class Subject:
    systems: list[str]
    scores: np.ndarray  # systems × segments of the full set, NaN where not scored
    subsets: list[Subset]
    description: str  # what the subsets are
    full_description: str  # what they are compared with
    difficulty: list[float | None]  # per segment, perfect score − mean score
    notes: list[str] = field(default_factory=list)
    gaps: dict[str, Any] | None = None


def _listed(counts: Iterable[tuple[str, int]]) -> str:
    parts = [f"{name} ({count})" for name, count in counts]
    more = len(parts) - _SHOWN
    return ", ".join(parts[:_SHOWN]) + (f" and {more} more" if more > 0 else "")


def _difficulty(scores: np.ndarray, perfect: float) -> list[float | None]:
    scored = np.sum(~np.isnan(scores), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(scored > 0, np.nansum(scores, axis=0) / np.maximum(scored, 1), np.nan)
    return [None if math.isnan(v) else round(perfect - float(v), 6) for v in means]


def _dataset_scores(
    dataset: DifficultyDataset, code: str, include_references: bool
) -> tuple[DifficultyLanguagePair, ranking_inputs.ScoredInput]:
    pair = ranking_inputs.dataset_language_pair(dataset, code)
    scored = ranking_inputs.dataset_input(
        dataset, pair.code, ranking_inputs.HUMAN, include_references=include_references
    )
    return pair, scored


# --- a frozen challenge-set version ------------------------------------------------------------


def _dataset_reference(item: dict[str, Any]) -> tuple[int, str, int, int] | None:
    """(dataset id, language pair, segment row, segment id) of an item taken from a dataset."""
    provenance = item.get("provenance")
    if item.get("origin") != DATASET_ORIGIN or not isinstance(provenance, dict):
        return None
    dataset, segment = provenance.get("dataset"), provenance.get("segment")
    subset = provenance.get("hardest_subset")
    if not (isinstance(dataset, dict) and isinstance(segment, dict)):
        return None
    numbers = (dataset.get("id"), segment.get("row"), segment.get("id"))
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers):
        return None
    code = subset.get("language_pair") if isinstance(subset, dict) else None
    if not isinstance(code, str) or not code:
        code = f"{item.get('src_lang', '')}-{item.get('tgt_lang', '')}"
    return int(numbers[0]), code, int(numbers[1]), int(numbers[2])  # type: ignore[arg-type]


def _version_group(
    label: str, items: list[dict[str, Any]], code: str
) -> tuple[tuple[int, str], list[tuple[int, int]], list[str]]:
    """The (dataset, pair) the version's items come from, their (row, id)s, and notes."""
    references = [(item, _dataset_reference(item)) for item in items]
    taken = [(item, ref) for item, ref in references if ref is not None]
    if not taken:
        origins = Counter(str(item.get("origin") or "unknown") for item in items)
        raise InputError(
            "version",
            f"{label}: its {len(items)} items come from {_listed(origins.most_common())}, none "
            "from a difficulty dataset. Only a dataset has every system's human score on the "
            "full set a subset is compared with; rank the version's own scores on a ranking "
            "page instead.",
        )
    groups: dict[tuple[int, str], list[tuple[int, int]]] = defaultdict(list)
    for _, ref in taken:
        assert ref is not None
        groups[(ref[0], ref[1])].append((ref[2], ref[3]))
    if code:
        groups = {key: value for key, value in groups.items() if key[1] == code}
        if not groups:
            raise InputError("language_pair", f"{label} has no dataset items in {code!r}")
    if len(groups) > 1:
        found = _listed((f"dataset #{d} {lp}", len(v)) for (d, lp), v in sorted(groups.items()))
        raise InputError(
            "language_pair",
            f"{label}'s items come from several dataset language pairs ({found}): choose one",
        )
    (key, rows), notes = next(iter(groups.items())), []
    others = len(items) - len(rows)
    if others:
        notes.append(f"{others} of the version's {len(items)} items are not from {key[1]} of "
                     f"dataset #{key[0]} and are left out")  # fmt: skip
    return key, rows, notes


def _checked_rows(
    label: str, pair: DifficultyLanguagePair, rows: list[tuple[int, int]]
) -> list[int]:
    """The items' segment rows, each still the segment it was taken from."""
    ids = dict(
        DifficultySegment.objects.filter(
            language_pair=pair, row__in={row for row, _ in rows}
        ).values_list("row", "id")
    )
    for row, segment_id in rows:
        if ids.get(row) != segment_id:
            raise InputError(
                "version",
                f"{label}: segment {segment_id} (row {row}) is no longer in {pair.dataset.name} "
                f"{pair.code}; the dataset changed since the items were taken from it",
            )
    return sorted({row for row, _ in rows})


def version_refusal(version: FrozenVersion) -> str | None:
    """Why the version cannot be measured at all, read from its items alone (no dataset read):
    the version's section says so before anyone asks."""
    label = f"{version.challenge_set.name} v{version.number}"
    items = ranking_inputs.version_items(version)
    if not items:
        return f"{label} has no items"
    try:
        _version_group(label, items, "")
    except InputError as exc:
        return str(exc) if exc.field == "version" else None
    return None


def version_subject(version: FrozenVersion, code: str = "") -> Subject:
    label = f"{version.challenge_set.name} v{version.number}"
    items = ranking_inputs.version_items(version)
    if not items:
        raise InputError("version", f"{label} has no items")
    (dataset_id, pair_code), rows, notes = _version_group(label, items, code)
    dataset = DifficultyDataset.objects.filter(pk=dataset_id).first()
    if dataset is None:
        raise InputError(
            "version", f"{label}: difficulty dataset #{dataset_id}, where its items came from, "
            "no longer exists",
        )  # fmt: skip
    pair, scored = _dataset_scores(dataset, pair_code, include_references=False)
    columns = _checked_rows(label, pair, rows)
    if len(rows) > len(columns):
        notes.append(f"{len(rows) - len(columns)} items repeat a segment: counted once")
    if len(columns) < 2:
        raise InputError("version", f"{label} holds {len(columns)} segment of {dataset.name}; "
                         "a subset needs at least two")  # fmt: skip
    return Subject(
        systems=scored.systems,
        scores=scored.scores,
        subsets=[Subset(label, columns, curve=False)],
        description=f"{label}: {len(columns)} segments of {dataset.name} {pair.code}",
        full_description=f"{scored.description}: {pair.n_segments} segments",
        difficulty=_difficulty(scored.scores, dataset.perfect_score),
        notes=notes + scored.notes,
    )


# --- a difficulty dataset's hardest segments ------------------------------------------------------


def _stored_estimates(
    evaluation: DifficultyEvaluation, estimator: str, pair: DifficultyLanguagePair
) -> np.ndarray:
    """One quality-like score per segment row, as the evaluation stored it (engine estimators:
    per distinct source in order of first row; per cell: the mean over systems)."""
    spec = parse_estimator(estimator)
    parts = [
        matrix_from_bytes(row.values)
        for row in DifficultyEstimate.objects.filter(
            evaluation=evaluation, estimator=estimator, language_pair=pair
        ).order_by("offset")
    ]
    if not parts:
        raise InputError("estimator", f"evaluation #{evaluation.pk} stored no {estimator} "
                         f"scores for {pair.code}")  # fmt: skip
    if spec.uses_engine:
        sources = DifficultySegment.objects.filter(language_pair=pair).order_by("row")
        first_row: dict[str, int] = {}
        source_of_row = [first_row.setdefault(s, len(first_row)) for s in
                         sources.values_list("source", flat=True)]  # fmt: skip
        per_source = np.concatenate(parts)
        if per_source.shape[0] != len(first_row):
            raise InputError("estimator", f"{estimator}'s stored scores do not line up with "
                             f"{pair.code}'s segments")  # fmt: skip
        values = per_source[np.array(source_of_row, dtype=np.intp)]
    else:
        values = parts[0]
    if values.shape[0] != pair.n_segments or values.ndim not in (1, 2):
        raise InputError("estimator", f"{estimator}'s stored scores do not line up with "
                         f"{pair.code}'s segments")  # fmt: skip
    return values if values.ndim == 1 else _cell_means(values)


def _cell_means(values: np.ndarray) -> np.ndarray:
    scored = np.sum(~np.isnan(values), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means: np.ndarray = np.where(
            scored > 0, np.nansum(values, axis=1) / np.maximum(scored, 1), np.nan
        )
    return means


def _check_evaluation(evaluation: DifficultyEvaluation, estimator: str) -> None:
    if evaluation.status != DifficultyEvaluation.Status.DONE:
        raise InputError("evaluation", f"evaluation #{evaluation.pk} is {evaluation.status}; "
                         "its estimates are complete once it is done")  # fmt: skip
    if estimator not in evaluation.estimators:
        offered = ", ".join([ORACLE, *evaluation.estimators])
        raise InputError("estimator", f"evaluation #{evaluation.pk} has no estimator "
                         f"{estimator!r} ({offered})")  # fmt: skip
    try:
        parse_estimator(estimator)
    except EstimatorError as exc:
        raise InputError("estimator", str(exc)) from None


def hardest_subject(
    dataset: DifficultyDataset,
    estimator: str,
    *,
    evaluation: DifficultyEvaluation | None = None,
    code: str = "",
) -> Subject:
    """The dataset pair's segments, hardest first by ``estimator`` (lowest quality first)."""
    include_references = bool(evaluation and evaluation.include_references)
    pair, scored = _dataset_scores(dataset, code, include_references)
    if estimator == ORACLE:
        selection = dec.oracle_source_language(scored.scores.T)
        label = "hardest by the human-score oracle"
    else:
        if evaluation is None:
            raise InputError("evaluation", f"choose the DEC evaluation that ran {estimator}")
        _check_evaluation(evaluation, estimator)
        selection = _stored_estimates(evaluation, estimator, pair)
        label = f"hardest by {estimator}"
    scored_rows = np.flatnonzero(~np.isnan(selection))
    order = scored_rows[np.argsort(selection[scored_rows], kind="stable")]  # ties: row order
    if order.size < 2:
        raise InputError("estimator", f"{estimator} scored {order.size} of {pair.code}'s "
                         "segments; a subset needs at least two")  # fmt: skip
    notes = list(scored.notes)
    if order.size < pair.n_segments:
        notes.append(f"{pair.n_segments - order.size} segments without a score from "
                     f"{estimator} are never selected")  # fmt: skip
    source = f" (evaluation #{evaluation.pk})" if evaluation is not None else ""
    return Subject(
        systems=scored.systems,
        scores=scored.scores,
        subsets=[Subset(label, [int(c) for c in order], curve=True)],
        description=f"{dataset.name} {pair.code}, {label}{source}",
        full_description=f"{scored.description}: {pair.n_segments} segments",
        difficulty=_difficulty(scored.scores, dataset.perfect_score),
        notes=notes,
    )


# --- an MT-breaker comparison ---------------------------------------------------------------


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _mean(values: Iterable[Any]) -> float | None:
    numbers = [n for n in map(_number, values) if n is not None]
    return sum(numbers) / len(numbers) if numbers else None


def _step_scores(step: Any, score: str) -> dict[str, float]:
    """{translator: score} of a selected step: QE (mean over engines) or people's scores."""
    found: dict[str, float] = {}
    source = step.qe if score == QE else step.human
    if not isinstance(source, dict):
        return found
    for system, per_engine in source.items():
        if not isinstance(per_engine, dict):
            continue
        values = per_engine.values()
        if score == HUMAN:
            values = [r.get("score") for r in values if isinstance(r, dict)]  # type: ignore[assignment]
        mean = _mean(values)
        if mean is not None:
            found[str(system)] = mean
    return found


def _comparison_runs(comparison: str) -> list[BreakerRun]:
    runs = breaker_selectors.comparison_runs(comparison)
    if not runs:
        raise InputError("comparison", f"there is no MT-breaker comparison named {comparison!r}")
    unfinished = [f"#{r.pk} ({r.status})" for r in runs if not r.is_finished]
    if unfinished:
        raise InputError("comparison", f"runs {', '.join(unfinished)} of {comparison!r} have "
                         "not ended: their selected texts may still change")  # fmt: skip
    return runs


def _comparison_language(runs: list[BreakerRun], language: str, score: str) -> str:
    own = sorted({run.tgt_lang for run in runs})
    if score == HUMAN and language and own != [language]:
        raise InputError("language_pair", f"people scored the runs' own translations into "
                         f"{', '.join(own)}, not {language!r}")  # fmt: skip
    if language:
        return language
    if len(own) > 1:
        raise InputError("language_pair", f"the runs translate into {', '.join(own)}: choose one")
    return own[0]


def _text_cells(
    runs: list[BreakerRun], language: str, score: str
) -> tuple[list[tuple[str, int]], dict[tuple[int, str], list[float]]]:
    """Every selected text as (method label, chain id), and the scores of (chain id, system)."""
    texts: list[tuple[str, int]] = []
    cells: dict[tuple[int, str], list[float]] = defaultdict(list)
    labels = Counter(method_spec(run.method).label for run in runs)
    for run in runs:
        label = method_spec(run.method).label
        label = label if labels[label] == 1 else f"{label} #{run.pk}"
        for selected in breaker_selectors.selected_chains(run):
            chain = selected.chain
            texts.append((label, chain.pk))
            step = next((s for s in selected.steps if s.index == chain.selected_step), None)
            if step is not None and run.tgt_lang == language:
                for system, value in _step_scores(step, score).items():
                    cells[(chain.pk, system)].append(value)
    if score == QE:
        transferred = TransferResult.objects.filter(
            chain_id__in=[chain for _, chain in texts], tgt_lang=language, quality__isnull=False
        ).values_list("chain_id", "translator", "quality")
        for chain_id, translator, quality in transferred:
            if (number := _number(quality)) is not None:
                cells[(chain_id, translator)].append(number)
    return texts, cells


def breaker_subject(comparison: str, score: str = QE, language: str = "") -> Subject:
    """Each method's selected texts against every text of the comparison (seed 001 §3.3)."""
    if score not in (QE, HUMAN):
        raise InputError("score", f"a comparison's score is {QE!r} or {HUMAN!r}, not {score!r}")
    runs = _comparison_runs(comparison)
    language = _comparison_language(runs, language, score)
    texts, cells = _text_cells(runs, language, score)
    scored_texts = [(label, chain) for label, chain in texts
                    if any(key[0] == chain for key in cells)]  # fmt: skip
    systems = sorted({system for _, system in cells})
    what = "QE quality" if score == QE else "human scores"
    if len(systems) < 2:
        named = f" ({systems[0]})" if systems else ""
        raise InputError(
            "comparison",
            f"{comparison!r}: its texts have {what} into {language} for {len(systems)} "
            f"translator{named}. Model gaps need several: a Multi run (several targets), or a "
            f"transfer of the comparison's texts to other translators into {language}.",
        )
    row_of = {system: k for k, system in enumerate(systems)}
    column_of = {chain: k for k, (_, chain) in enumerate(scored_texts)}
    matrix = np.full((len(systems), len(scored_texts)), np.nan)
    for (chain, system), values in cells.items():
        if chain in column_of:
            matrix[row_of[system], column_of[chain]] = sum(values) / len(values)
    return _breaker_result(comparison, language, what, systems, matrix, scored_texts, len(texts))


def _breaker_result(
    comparison: str,
    language: str,
    what: str,
    systems: list[str],
    matrix: np.ndarray,
    texts: list[tuple[str, int]],
    n_selected: int,
) -> Subject:
    by_method: dict[str, list[int]] = defaultdict(list)
    for column, (label, _) in enumerate(texts):
        by_method[label].append(column)
    notes = []
    if n_selected > len(texts):
        notes.append(f"{n_selected - len(texts)} selected texts without {what} left out")
    small = [label for label, columns in by_method.items() if len(columns) < 2]
    if small:
        notes.append(f"methods with fewer than two scored texts are not measured: "
                     f"{', '.join(small)}")  # fmt: skip
    subsets = [Subset(label, columns, curve=False) for label, columns in by_method.items()
               if len(columns) >= 2]  # fmt: skip
    if not subsets:
        raise InputError("comparison", f"no method of {comparison!r} has two texts with {what}")
    gaps = model_gaps(matrix, [(label, columns) for label, columns in by_method.items()])
    gaps["systems"] = [systems[k] for k in gaps["order"]]
    return Subject(
        systems=systems,
        scores=matrix,
        subsets=subsets,
        description=f"each method's texts of {comparison!r} ({what}, into {language})",
        full_description=f"all {len(texts)} scored texts of {comparison!r} by "
        f"{len(systems)} translators",
        difficulty=_difficulty(matrix, 100.0),
        notes=notes,
        gaps=gaps,
    )
