"""Inter-annotator agreement and majority vote (pure numpy/scipy, no Django).

Two kinds of judgments:

* **scores** (ESA 0–100, MQM mapped to 0–100): pairwise Kendall tau_b and Pearson r between
  annotators on the items both judged, and Krippendorff's alpha at the interval level over the
  whole reliability matrix (missing cells allowed);
* **choices** (one option, or a set of options for multi-select questions): total agreement,
  Fleiss' kappa and PABAK as seed 004 App. A.3 reports them, and a per-item majority vote.

Inputs are plain rows: ``(item, annotator, value)`` for scores and ``{item: [label, ...]}`` for
choices, so the selectors can stream them from the database and tests can write them by hand.
Undefined statistics (too few shared items, constant ratings, a single category) are ``None``,
never NaN, so results serialise to JSON as they are.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import krippendorff
import numpy as np

ScoreRow = tuple[Hashable, Hashable, float]
"""(item, annotator, score)."""

Choice = Hashable | frozenset[Hashable]
"""One annotator's answer to a choice question: an option, or a frozenset for multi-select."""

TIE = "tie"
"""How exports spell the majority of an item whose most-voted options are tied."""


def _clean(value: float) -> float | None:
    """None for NaN/inf (undefined statistic), else a float rounded for stable output."""
    value = float(value)
    return None if not math.isfinite(value) else round(value, 6)


# --------------------------------------------------------------------------------------------
# Scores


@dataclass(frozen=True)
class PairAgreement:
    annotator_a: Hashable
    annotator_b: Hashable
    n_shared: int
    kendall_tau: float | None
    pearson: float | None


@dataclass(frozen=True)
class ScoreAgreement:
    n_items: int
    n_annotators: int
    krippendorff_alpha: float | None
    mean_kendall_tau: float | None
    mean_pearson: float | None
    pairs: list[PairAgreement] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def reliability_matrix(
    rows: Iterable[ScoreRow],
) -> tuple[list[Hashable], list[Hashable], np.ndarray]:
    """Annotators × items matrix of scores, NaN where an annotator did not judge an item.

    If an annotator judged an item twice (should not happen), the last row wins.
    """
    cells: dict[tuple[Hashable, Hashable], float] = {}
    for item, annotator, score in rows:
        cells[(annotator, item)] = float(score)
    annotators = sorted({a for a, _ in cells}, key=str)
    items = sorted({i for _, i in cells}, key=str)
    a_index = {a: n for n, a in enumerate(annotators)}
    i_index = {i: n for n, i in enumerate(items)}
    matrix = np.full((len(annotators), len(items)), np.nan)
    for (annotator, item), score in cells.items():
        matrix[a_index[annotator], i_index[item]] = score
    return annotators, items, matrix


def pairwise_correlations(
    annotators: Sequence[Hashable], matrix: np.ndarray, *, min_shared: int = 3
) -> list[PairAgreement]:
    """Kendall tau_b and Pearson r for every pair of annotators on the items both judged.

    Pairs with fewer than ``min_shared`` shared items get ``None`` for both (a correlation over
    two points is ±1 and means nothing); so do pairs where one side is constant.
    """
    pairs = []
    for a, b in itertools.combinations(range(len(annotators)), 2):
        shared = ~np.isnan(matrix[a]) & ~np.isnan(matrix[b])
        n = int(shared.sum())
        tau = r = None
        x, y = matrix[a][shared], matrix[b][shared]
        if n >= max(2, min_shared) and np.ptp(x) > 0 and np.ptp(y) > 0:
            # Imported here: scipy.stats costs every process that loads the protocols about
            # 0.5 s of CPU at start-up, and most never compute an agreement.
            from scipy import stats

            tau = _clean(stats.kendalltau(x, y).statistic)
            r = _clean(stats.pearsonr(x, y).statistic)
        pairs.append(PairAgreement(annotators[a], annotators[b], n, tau, r))
    return pairs


def krippendorff_alpha_interval(matrix: np.ndarray) -> float | None:
    """Krippendorff's alpha, interval metric, on an annotators × items matrix (NaN = missing).

    ``None`` when it is undefined: fewer than two pairable values (no item judged twice) or a
    single distinct value among them (the expected disagreement is zero).
    """
    pairable = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
    values = pairable[~np.isnan(pairable)]
    if values.size < 2 or np.unique(values).size < 2:
        return None
    return _clean(krippendorff.alpha(reliability_data=pairable, level_of_measurement="interval"))


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(float(np.mean(present)), 6) if present else None


def score_agreement(rows: Iterable[ScoreRow], *, min_shared: int = 3) -> ScoreAgreement:
    """All score statistics for one campaign (or any subset of its rows)."""
    annotators, items, matrix = reliability_matrix(rows)
    pairs = pairwise_correlations(annotators, matrix, min_shared=min_shared)
    return ScoreAgreement(
        n_items=len(items),
        n_annotators=len(annotators),
        krippendorff_alpha=krippendorff_alpha_interval(matrix),
        mean_kendall_tau=_mean(p.kendall_tau for p in pairs),
        mean_pearson=_mean(p.pearson for p in pairs),
        pairs=pairs,
    )


# --------------------------------------------------------------------------------------------
# Choices


@dataclass(frozen=True)
class ChoiceAgreement:
    n_items: int
    n_categories: int
    total_agreement: float | None
    fleiss_kappa: float | None
    pabak: float | None
    multi_select: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def expand_multi_select(
    labels_by_item: Mapping[Hashable, Sequence[Iterable[Hashable]]],
    options: Iterable[Hashable] | None = None,
) -> dict[tuple[Hashable, Hashable], list[bool]]:
    """Turn multi-select answers into one yes/no decision per (item, option).

    Every option offered (``options``, or every option anyone selected on that item) becomes a
    binary question "is this option right?", each annotator answering yes when they selected it.
    This is how seed 004 asks about each rule / variation separately, and it keeps Fleiss and
    PABAK well defined (exact-set matching would make every distinct set its own category).
    """
    offered = list(options) if options is not None else None
    expanded: dict[tuple[Hashable, Hashable], list[bool]] = {}
    for item, answers in labels_by_item.items():
        sets = [frozenset(a) for a in answers]
        item_options = offered if offered is not None else sorted(set().union(*sets), key=str)
        for option in item_options:
            expanded[(item, option)] = [option in s for s in sets]
    return expanded


def _count_table(
    labels_by_item: Mapping[Any, Sequence[Hashable]], categories: Sequence[Hashable]
) -> np.ndarray:
    """Items × categories counts, keeping only items judged by at least two annotators."""
    c_index = {c: n for n, c in enumerate(categories)}
    rows = []
    for labels in labels_by_item.values():
        if len(labels) < 2:
            continue
        row = np.zeros(len(categories))
        for label in labels:
            row[c_index[label]] += 1
        rows.append(row)
    return np.array(rows).reshape(len(rows), len(categories))


def total_agreement(counts: np.ndarray) -> float | None:
    """Seed 004 App. A.3: the proportion of items on which all annotators gave the same answer."""
    if counts.shape[0] == 0:
        return None
    unanimous = (counts.max(axis=1) == counts.sum(axis=1)).sum()
    return _clean(unanimous / counts.shape[0])


def fleiss_kappa(counts: np.ndarray) -> float | None:
    """Fleiss' kappa (Fleiss 1971) on an items × categories count table.

    1. P_i = (Σ_j n_ij² − n_i) / (n_i (n_i − 1)), the agreeing pairs of item i;
    2. P̄ = mean_i P_i;  p_j = Σ_i n_ij / Σ_i n_i;  P_e = Σ_j p_j²;
    3. κ = (P̄ − P_e) / (1 − P_e).
    With a constant number of raters per item this is Fleiss' formula; items with different
    numbers of raters use their own n_i. ``None`` when P_e = 1 (everyone used one category: the
    "NaN" of seed 004 Table 4, Latvian).
    """
    if counts.shape[0] == 0:
        return None
    n_i = counts.sum(axis=1)
    p_i = ((counts**2).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    p_bar = p_i.mean()
    p_j = counts.sum(axis=0) / n_i.sum()
    p_e = float((p_j**2).sum())
    if math.isclose(p_e, 1.0):
        return None
    return _clean((p_bar - p_e) / (1 - p_e))


def pabak(counts: np.ndarray, n_categories: int) -> float | None:
    """Prevalence- and bias-adjusted kappa (Byrt et al. 1993), as seed 004 App. A.3 reports it.

    PABAK = (q · P_o − 1) / (q − 1) with q categories; for yes/no questions 2 · P_o − 1. Seed 004
    takes P_o to be the total agreement (Table 4: total agreement 0.975 → PABAK 0.950), so we do
    too; with two raters this is exactly Byrt's 2 · P_o − 1.
    """
    if counts.shape[0] == 0:
        return None
    # Unrounded: total_agreement() rounds to 6 places, which would leak into PABAK (−1e-06).
    p_o = float((counts.max(axis=1) == counts.sum(axis=1)).mean())
    q = max(2, n_categories)
    return _clean((q * p_o - 1) / (q - 1))


def choice_agreement(
    labels_by_item: Mapping[Any, Sequence[Choice]],
    *,
    categories: Iterable[Hashable] | None = None,
    n_categories: int | None = None,
    multi_select: bool = False,
) -> ChoiceAgreement:
    """Total agreement, Fleiss' kappa and PABAK for one choice question set.

    ``labels_by_item`` maps each item to the answers it received (one per annotator). For
    multi-select questions each answer is an iterable of options and the statistics are computed
    on per-option yes/no decisions (:func:`expand_multi_select`). ``categories`` is the full list
    of options offered — it sets q in PABAK; when omitted, the options actually used (at least 2).
    ``n_categories`` overrides q when items offer different option lists (e.g. each lexical
    concept its own variations, seed 004 §3): q is then the number of options one item offers.
    Items with fewer than two answers carry no agreement information and are skipped.
    """
    if multi_select:
        binary = expand_multi_select(labels_by_item, categories)  # type: ignore[arg-type]
        # Item keys are opaque (Mapping is invariant in them): any hashable id goes.
        table: Mapping[Any, Sequence[Hashable]] = binary
        cats: list[Hashable] = [False, True]
    else:
        table = labels_by_item
        used = {label for labels in labels_by_item.values() for label in labels}
        cats = list(categories) if categories is not None else []
        cats += sorted(used - set(cats), key=str)
    counts = _count_table(table, cats)
    if multi_select:
        n_categories = 2
    return ChoiceAgreement(
        n_items=int(counts.shape[0]),
        n_categories=n_categories or len(cats),
        total_agreement=total_agreement(counts),
        fleiss_kappa=fleiss_kappa(counts),
        pabak=pabak(counts, n_categories or len(cats)),
        multi_select=multi_select,
    )


def item_agreement(labels: Sequence[Hashable]) -> float | None:
    """Share of annotator pairs that agree on one item (Fleiss' P_i); ``None`` under 2 answers."""
    n = len(labels)
    if n < 2:
        return None
    counts = np.array(list(Counter(labels).values()), dtype=float)
    return _clean(((counts**2).sum() - n) / (n * (n - 1)))


@dataclass(frozen=True)
class Majority:
    """The outcome of a majority vote on one item.

    ``label`` is the winning option (for multi-select, a frozenset of options); ``None`` when the
    top options are tied (``tie`` is then True) or when there are no answers (``n`` is 0).
    """

    label: Any
    votes: int
    n: int
    tie: bool = False
    tie_broken: bool = False
    """The top options were tied and the tie rule picked ``label`` (``attested_wins``)."""

    def display(self) -> str:
        """The label as exports and the dashboard write it: options joined by "|", or "tie"."""
        if self.tie:
            return TIE
        if self.label is None:
            return ""
        if isinstance(self.label, frozenset):
            return "|".join(sorted(map(str, self.label)))
        return str(self.label)


def majority(labels: Sequence[Hashable], *, strict: bool = False) -> Majority:
    """Majority vote over one item's answers (seed 004: majority of 3 native speakers).

    Tie rule: when two or more options share the highest vote count there is no majority and the
    result is a tie with no label — never an arbitrary pick, so a tie is visible in exports and
    the item can be sent to another annotator. With ``strict`` the winner also needs more than
    half the votes (with 3 annotators and 3+ options, 1-1-1 is a tie either way).
    """
    if not labels:
        return Majority(None, 0, 0)
    ranked = Counter(labels).most_common()
    top_label, top = ranked[0]
    n = len(labels)
    if (len(ranked) > 1 and ranked[1][1] == top) or (strict and 2 * top <= n):
        return Majority(None, top, n, tie=True)
    return Majority(top_label, top, n)


NO_MAJORITY = "no_majority"
ATTESTED_WINS = "attested_wins"
TIE_RULES = (NO_MAJORITY, ATTESTED_WINS)


def majority_vote(
    labels: Sequence[Hashable],
    *,
    tie_rule: str = NO_MAJORITY,
    attested: Hashable | None = None,
    strict: bool = False,
) -> Majority:
    """Majority vote over one item's answers with an explicit tie rule (seed 004 §2.3).

    Give it the answers of annotators who pass quality control (``selectors.item_results``
    counts only those). Tie rules, when two or more options share the highest count:

    * ``no_majority`` — the item has no majority (``tie`` is True, no label): it stays out of
      a dataset built from majorities, as :func:`majority` does;
    * ``attested_wins`` — if the attested option (the one the data says is right, e.g. the
      variation of the original sentence) is among the tied options it wins (``tie_broken``);
      a tie between other options is still no majority.

    ``strict`` also needs more than half the votes for a majority, as in :func:`majority`.
    """
    if tie_rule not in TIE_RULES:
        raise ValueError(f"unknown tie rule {tie_rule!r}; use one of {', '.join(TIE_RULES)}")
    vote = majority(labels, strict=strict)
    if not vote.tie or tie_rule == NO_MAJORITY or attested is None:
        return vote
    counts = Counter(labels)
    if counts.get(attested, 0) == vote.votes and (not strict or 2 * vote.votes > vote.n):
        return Majority(attested, vote.votes, vote.n, tie=False, tie_broken=True)
    return vote


def majority_multi(answers: Sequence[Iterable[Hashable]]) -> Majority:
    """Majority for a multi-select item: the set of options selected by more than half.

    Each option is decided on its own (per-option yes/no, as in :func:`expand_multi_select`); an
    option selected by exactly half of the annotators is a tie and makes the whole item a tie.
    ``votes`` is the number of annotators whose own selection equals the majority set.
    """
    sets = [frozenset(a) for a in answers]
    n = len(sets)
    if n == 0:
        return Majority(None, 0, 0)
    counts = Counter(option for s in sets for option in s)
    if any(2 * c == n for c in counts.values()):
        return Majority(None, 0, n, tie=True)
    chosen = frozenset(o for o, c in counts.items() if 2 * c > n)
    return Majority(chosen, sum(1 for s in sets if s == chosen), n)


def score_item_agreement(scores: Sequence[float], scale: float = 100.0) -> float | None:
    """Agreement of one item's 0–100 scores: 1 − mean absolute pairwise difference / ``scale``.

    1 when every annotator gave the same score, 0 when they sit at opposite ends of the scale;
    ``None`` under 2 scores. A per-item figure (Krippendorff's α needs many items), on the same
    0–1 footing as :func:`item_agreement` for choices, so one minimum-agreement rule fits both.
    """
    n = len(scores)
    if n < 2:
        return None
    values = np.asarray(scores, dtype=float)
    diffs = np.abs(values[:, None] - values[None, :])
    mean_diff = diffs.sum() / (n * (n - 1))
    return _clean(round(1.0 - mean_diff / scale, 6))


# --------------------------------------------------------------------------------------------
# Questionnaires: agreement per question family


YES_NO = "yes_no"
SINGLE = "single"
MULTIPLE = "multiple"
NONE_OF_THESE = "none"
"""How a multiple-choice answer that chose "none of these" is stored."""


@dataclass(frozen=True)
class FamilyAgreement:
    """Agreement on one question family (seed 004 Tables 4–6: one row per family).

    ``n_units`` counts the decisions with at least two answers: (item, question) pairs for
    yes/no and single-choice families, (item, question, option) yes/no decisions for
    multiple-choice families, whose options are judged one by one as in
    :func:`expand_multi_select`.
    """

    family: str
    question_type: str
    n_item_questions: int
    n_units: int
    n_categories: int
    total_agreement: float | None
    fleiss_kappa: float | None
    pabak: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _binary_rows(
    answers: Mapping[Hashable, Sequence[Any]], n_options: Mapping[Hashable, int]
) -> dict[tuple[Hashable, int], list[bool]]:
    """Per-option yes/no decisions of multiple-choice answers; "none" selects no option."""
    rows: dict[tuple[Hashable, int], list[bool]] = {}
    for unit, values in answers.items():
        chosen = [set() if v == NONE_OF_THESE else set(v) for v in values]
        for option in range(n_options.get(unit, 0)):
            rows[(unit, option)] = [option in c for c in chosen]
    return rows


def family_agreement(
    family: str,
    question_type: str,
    answers: Mapping[Any, Sequence[Any]],
    n_options: Mapping[Any, int] | None = None,
) -> FamilyAgreement:
    """Total agreement, Fleiss' κ and PABAK of one question family.

    ``answers`` maps each (item, question) unit of the family to its answers, one per
    annotator, as a questionnaire stores them: ``"yes"``/``"no"``, an option index, or a list
    of option indices / ``"none"``. ``n_options`` gives each unit's number of options (single
    and multiple choice). The number of categories k of PABAK = (k·P_o − 1)/(k − 1) is 2 for
    yes/no and for the per-option decisions of multiple choice, and the most common number of
    options for single choice; P_o is the total agreement, as seed 004 reports it
    (:func:`pabak`). Units with fewer than two answers are skipped.
    """
    n_options = n_options or {}
    if question_type == MULTIPLE:
        table: Mapping[Any, Sequence[Hashable]] = _binary_rows(answers, n_options)
        categories: list[Hashable] = [False, True]
        k = 2
    elif question_type == YES_NO:
        table, categories, k = answers, ["no", "yes"], 2
    elif question_type == SINGLE:
        sizes = Counter(n_options.get(unit, 0) for unit in answers)
        k = max(2, sizes.most_common(1)[0][0]) if sizes else 2
        used = {v for values in answers.values() for v in values}
        categories = sorted(set(range(k)) | used, key=str)
        table = answers
    else:
        raise ValueError(f"unknown question type {question_type!r}")
    counts = _count_table(table, categories)
    return FamilyAgreement(
        family=family,
        question_type=question_type,
        n_item_questions=len(answers),
        n_units=int(counts.shape[0]),
        n_categories=k,
        total_agreement=total_agreement(counts),
        fleiss_kappa=fleiss_kappa(counts),
        pabak=pabak(counts, k),
    )
