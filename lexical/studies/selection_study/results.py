"""Majority vote → "sufficient context" dataset and Table 2 of seed 004 (§2.3), pure Python.

Inputs are plain records (:class:`ItemVotes`), one per regular study item, carrying the labels
chosen by the annotators who pass quality control; the Django side (``selectors``) builds them
from ``annotation.selectors.item_results``. Nothing here is stored: every page recomputes it, so
a late judgment or a changed QC verdict can never leave a stale number behind.

Definitions (seed 004 Table 2 caption: "a sentence is determined to have sufficient context when
the majority of annotators select its ground truth variation"):

* an item is **complete** when it has all its ``overlap`` submissions (the campaign's own notion,
  the one its progress bar counts);
* its **majority** is ``annotation.agreement.majority_vote`` over the passing annotators' labels
  with the study's tie rule (``no_majority``: a tie has no majority; ``attested_wins``: the
  attested variation wins a tie it is part of);
* it has **sufficient context** when it is complete and the majority equals the attested
  variation; a tie or another majority is "insufficient"; an incomplete item is undecided
  (``None``) and stays out of every percentage.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from annotation import agreement


@dataclass(frozen=True)
class ItemVotes:
    """One study item: which concept and example it asks about, and the counted votes."""

    item_id: int
    example_id: int | None
    concept_id: int | None
    concept: str
    attested: str | None
    labels: tuple[str, ...]
    complete: bool
    n_submitted: int = 0
    source: str = ""
    highlight: tuple[int, int] | None = None
    choices: tuple[str, ...] = ()

    @property
    def source_parts(self) -> tuple[str, str, str] | None:
        """(before, concept word, after) of the source when the highlight is known."""
        if self.highlight is None:
            return None
        start, end = self.highlight
        return self.source[:start], self.source[start:end], self.source[end:]


@dataclass(frozen=True)
class ItemOutcome:
    votes: ItemVotes
    majority: str | None
    majority_votes: int
    tie: bool
    tie_broken: bool
    agreement: float | None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def sufficient(self) -> bool | None:
        """True / False for a complete item, ``None`` while it is not complete."""
        if not self.votes.complete:
            return None
        return self.majority is not None and self.majority == self.votes.attested


def decide(votes: ItemVotes, tie_rule: str = agreement.NO_MAJORITY) -> ItemOutcome:
    """The majority of one item under ``tie_rule`` (raises ``ValueError`` for an unknown rule)."""
    vote = agreement.majority_vote(list(votes.labels), tie_rule=tie_rule, attested=votes.attested)
    counts: dict[str, int] = {}
    for label in votes.labels:
        counts[label] = counts.get(label, 0) + 1
    return ItemOutcome(
        votes=votes,
        majority=None if vote.label is None else str(vote.label),
        majority_votes=vote.votes,
        tie=vote.tie,
        tie_broken=vote.tie_broken,
        agreement=agreement.item_agreement(list(votes.labels)),
        counts=counts,
    )


def decide_all(items: Iterable[ItemVotes], tie_rule: str) -> list[ItemOutcome]:
    return [decide(v, tie_rule) for v in items]


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 6) if whole else None


def _percent(share: float | None) -> float | None:
    """A 0–1 share as a percentage with one decimal, as Table 2 prints it."""
    return None if share is None else round(100 * share, 1)


class _SufficientShare:
    """The share of a row's complete items with sufficient context (Table 2's percentage)."""

    complete: int
    sufficient: int

    @property
    def sufficient_share(self) -> float | None:
        """Share (0–1) of complete items with sufficient context; ``None`` before any."""
        return _share(self.sufficient, self.complete)

    @property
    def sufficient_percent(self) -> float | None:
        return _percent(self.sufficient_share)


@dataclass(frozen=True)
class Table2Row(_SufficientShare):
    """One language of seed 004 Table 2, with the counts behind the percentage."""

    language: str
    pool_size: int  # candidate examples of the study's concepts ("Full Dataset")
    items: int  # regular items in the study
    complete: int
    sufficient: int  # = dataset size ("Expert Dataset")
    ties: int

    @property
    def dataset_size(self) -> int:
        return self.sufficient

    def to_dict(self) -> dict:
        return {
            "language": self.language,
            "pool_size": self.pool_size,
            "items": self.items,
            "complete": self.complete,
            "sufficient": self.sufficient,
            "ties": self.ties,
            "sufficient_share": self.sufficient_share,
            "dataset_size": self.dataset_size,
        }


def table2_row(language: str, pool_size: int, outcomes: Sequence[ItemOutcome]) -> Table2Row:
    complete = [o for o in outcomes if o.votes.complete]
    return Table2Row(
        language=language,
        pool_size=pool_size,
        items=len(outcomes),
        complete=len(complete),
        sufficient=sum(1 for o in complete if o.sufficient),
        ties=sum(1 for o in complete if o.tie),
    )


@dataclass(frozen=True)
class ConceptRow(_SufficientShare):
    concept_id: int | None
    concept: str
    items: int
    complete: int
    sufficient: int
    mean_agreement: float | None

    def to_dict(self) -> dict:
        return {
            "concept_id": self.concept_id,
            "concept": self.concept,
            "items": self.items,
            "complete": self.complete,
            "sufficient": self.sufficient,
            "sufficient_share": self.sufficient_share,
            "mean_agreement": self.mean_agreement,
        }


def per_concept(outcomes: Sequence[ItemOutcome]) -> list[ConceptRow]:
    """One row per concept, by concept name: items, complete, sufficient, mean item agreement
    (over complete items with at least two counted votes)."""
    groups: dict[tuple[str, int | None], list[ItemOutcome]] = {}
    for outcome in outcomes:
        groups.setdefault((outcome.votes.concept, outcome.votes.concept_id), []).append(outcome)
    rows = []
    for (name, concept_id), group in sorted(
        groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)
    ):
        complete = [o for o in group if o.votes.complete]
        agreements = [o.agreement for o in complete if o.agreement is not None]
        rows.append(
            ConceptRow(
                concept_id=concept_id,
                concept=name,
                items=len(group),
                complete=len(complete),
                sufficient=sum(1 for o in complete if o.sufficient),
                mean_agreement=round(sum(agreements) / len(agreements), 6) if agreements else None,
            )
        )
    return rows


@dataclass(frozen=True)
class HumanAccuracy:
    """The paper's human performance: share of complete items whose majority is the attested
    variation, over the examples a model evaluation asked about."""

    annotators_per_item: int
    examples: int  # complete study items among the evaluation's examples
    correct: int
    missing: int  # evaluation examples without a complete study item

    @property
    def accuracy(self) -> float | None:
        return _share(self.correct, self.examples)

    @property
    def percent(self) -> float | None:
        return _percent(self.accuracy)


def human_accuracy(
    outcomes: Sequence[ItemOutcome], example_ids: Iterable[int], annotators_per_item: int
) -> HumanAccuracy:
    wanted = set(example_ids)
    decided = {
        o.votes.example_id: o for o in outcomes if o.votes.complete and o.votes.example_id in wanted
    }
    return HumanAccuracy(
        annotators_per_item=annotators_per_item,
        examples=len(decided),
        correct=sum(1 for o in decided.values() if o.sufficient),
        missing=len(wanted - set(decided)),
    )
