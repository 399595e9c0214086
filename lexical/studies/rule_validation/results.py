"""The maths of the rule-validation study (seed 004 §2.2–2.3, Tables 1, 3, 4–6); pure Python.

Each concept item gathers, per counted annotator (QC verdict pass), three kinds of yes/no
judgement: "no variation is missing" (recall), "this listed variation means the concept"
(precision, one per variation) and "this rule is correct" (one per rule). The paper does not
say whether its shares are over single judgements or over majorities, so both are given:

1. **micro** — the share of positive judgements among all individual judgements;
2. **majority** — each unit (a concept for recall, a (concept, variation) for precision, a
   rule for rules) is decided by the majority of its judgements, only once it has at least
   ``min_votes`` of them; units whose vote is tied are left out and counted in ``ties``.

A rule's majority is also its ``Rule.validation_status`` (:func:`rule_verdict`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from annotation.agreement import MULTIPLE, YES_NO, FamilyAgreement, family_agreement

CORRECT, INCORRECT = "correct", "incorrect"
FAMILIES = ("rules", "precision", "recall")


@dataclass(frozen=True)
class RuleJudgments:
    rule_id: int
    generator: str
    votes: tuple[bool, ...]  # True: "this rule is correct", one per counted annotator


@dataclass(frozen=True)
class ConceptJudgments:
    """The counted answers on one concept item, one entry per annotator in the same order.

    ``wrong[a]`` is the set of listed variation indices annotator ``a`` marked as "does not
    mean the concept" (empty for "none of these"); ``missing[a]`` is True when ``a`` said a
    variation is missing.
    """

    item_id: int
    n_variations: int
    missing: tuple[bool, ...]
    wrong: tuple[frozenset[int], ...]
    rules: tuple[RuleJudgments, ...] = ()
    # The raw stored answers per question id, for agreement (family_agreement's input).
    raw: Mapping[str, Sequence[Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Share:
    """A share of positive judgements, micro and by majority (see the module docstring)."""

    micro: float | None
    micro_positive: int
    micro_total: int
    majority: float | None
    majority_positive: int
    majority_total: int
    ties: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ratio(positive: int, total: int) -> float | None:
    return round(positive / total, 6) if total else None


def share(units: Iterable[Sequence[bool]], *, min_votes: int = 1) -> Share:
    """Micro and majority shares of True over units of yes/no votes (True = positive)."""
    micro_positive = micro_total = 0
    majority_positive = majority_total = ties = 0
    for votes in units:
        yes = sum(1 for v in votes if v)
        micro_positive += yes
        micro_total += len(votes)
        if not votes or len(votes) < min_votes:
            continue
        no = len(votes) - yes
        if yes == no:
            ties += 1
            continue
        majority_total += 1
        majority_positive += int(yes > no)
    return Share(
        micro=_ratio(micro_positive, micro_total),
        micro_positive=micro_positive,
        micro_total=micro_total,
        majority=_ratio(majority_positive, majority_total),
        majority_positive=majority_positive,
        majority_total=majority_total,
        ties=ties,
    )


def precision_units(concepts: Iterable[ConceptJudgments]) -> list[list[bool]]:
    """One unit per listed variation: each annotator's "it means the concept"."""
    return [
        [index not in marked for marked in concept.wrong]
        for concept in concepts
        for index in range(concept.n_variations)
    ]


def recall_units(concepts: Iterable[ConceptJudgments]) -> list[list[bool]]:
    """One unit per concept: each annotator's "no variation is missing"."""
    return [[not said for said in concept.missing] for concept in concepts]


def precision(concepts: Sequence[ConceptJudgments], *, min_votes: int = 1) -> Share:
    """Table 1 precision: the share of listed variations not marked "does not mean"."""
    return share(precision_units(concepts), min_votes=min_votes)


def recall(concepts: Sequence[ConceptJudgments], *, min_votes: int = 1) -> Share:
    """Table 1 recall: the share of concepts where no variation is missing."""
    return share(recall_units(concepts), min_votes=min_votes)


def rule_shares(concepts: Sequence[ConceptJudgments], *, min_votes: int = 1) -> dict[str, Share]:
    """Table 3: the share of correct rules per generator, generators in name order."""
    by_generator: dict[str, list[tuple[bool, ...]]] = {}
    for concept in concepts:
        for rule in concept.rules:
            by_generator.setdefault(rule.generator, []).append(rule.votes)
    return {
        generator: share(by_generator[generator], min_votes=min_votes)
        for generator in sorted(by_generator)
    }


def rule_verdict(votes: Sequence[bool], *, min_votes: int) -> str | None:
    """``correct``/``incorrect`` by majority once ``min_votes`` votes are in; None on a tie."""
    if not votes or len(votes) < min_votes:
        return None
    yes = sum(1 for v in votes if v)
    no = len(votes) - yes
    if yes == no:
        return None
    return CORRECT if yes > no else INCORRECT


def rule_verdicts(concepts: Iterable[ConceptJudgments], *, min_votes: int) -> dict[int, str | None]:
    return {
        rule.rule_id: rule_verdict(rule.votes, min_votes=min_votes)
        for concept in concepts
        for rule in concept.rules
    }


def family_agreements(
    concepts: Sequence[ConceptJudgments], rule_question_ids: Mapping[int, Sequence[str]]
) -> dict[str, FamilyAgreement]:
    """Tables 4–6: total agreement, Fleiss' κ and PABAK of the rules, precision and recall
    questions, from the stored answers (``raw``) of each item; ``rule_question_ids`` names each
    item's rule questions."""
    rules: dict[Any, Sequence[Any]] = {}
    wrong: dict[Any, Sequence[Any]] = {}
    missing: dict[Any, Sequence[Any]] = {}
    n_options: dict[Any, int] = {}
    for concept in concepts:
        for qid in rule_question_ids.get(concept.item_id, ()):
            if qid in concept.raw:
                rules[(concept.item_id, qid)] = concept.raw[qid]
        if "precision" in concept.raw:
            unit = (concept.item_id, "precision")
            wrong[unit] = concept.raw["precision"]
            n_options[unit] = concept.n_variations
        if "recall" in concept.raw:
            missing[(concept.item_id, "recall")] = concept.raw["recall"]
    return {
        "rules": family_agreement("rules", YES_NO, rules),
        "precision": family_agreement("precision", MULTIPLE, wrong, n_options),
        "recall": family_agreement("recall", YES_NO, missing),
    }
