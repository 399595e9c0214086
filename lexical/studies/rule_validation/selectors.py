"""Reads of rule-validation studies: the studies a user may see, and a study's results read
through ``annotation.selectors.item_results`` (only annotators whose QC verdict is pass)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from annotation import selectors as annotation_selectors
from annotation.agreement import NONE_OF_THESE, FamilyAgreement
from core.access import visible_or_404
from lexical.access import may_use_lexical
from lexical.models import RuleValidationStudy
from lexical.studies.rule_validation import results

ORIGIN = "lexical_rule_validation"


def studies_for_user(user) -> QuerySet[RuleValidationStudy]:
    if not may_use_lexical(user):
        return RuleValidationStudy.objects.none()
    return RuleValidationStudy.objects.select_related("campaign", "mining_job").prefetch_related(
        "rule_jobs"
    )


def study_for_user(user, pk: int) -> RuleValidationStudy:
    """The study, or a 404 whether it is missing or not the user's to see."""
    return visible_or_404(studies_for_user(user), pk, "no such rule-validation study")


def _wrong(value: Any) -> frozenset[int]:
    if value == NONE_OF_THESE or not isinstance(value, list):
        return frozenset()
    return frozenset(i for i in value if isinstance(i, int))


def _judgments(result: annotation_selectors.ItemResult) -> results.ConceptJudgments:
    answers = [j.answer.get("answers", {}) for j in result.counted]
    rule_meta = result.meta.get("rules", {})
    # A question asked once for rules that read the same judges each of them (studies made
    # before that list one rule per question).
    rules = tuple(
        results.RuleJudgments(
            rule_id=int(rule["rule_id"]),
            generator=str(rule["generator"]),
            votes=tuple(a.get(qid) == "yes" for a in answers if a.get(qid) is not None),
        )
        for qid, meta in rule_meta.items()
        for rule in meta.get("rules") or [meta]
    )
    questions = ["recall", "precision", *rule_meta]
    return results.ConceptJudgments(
        item_id=result.item_id,
        n_variations=len(result.meta.get("variation_ids", [])),
        missing=tuple(a.get("recall") == "yes" for a in answers if "recall" in a),
        wrong=tuple(_wrong(a.get("precision")) for a in answers if "precision" in a),
        rules=rules,
        raw={qid: [a[qid] for a in answers if a.get(qid) is not None] for qid in questions},
    )


def study_judgments(
    study: RuleValidationStudy,
) -> tuple[list[results.ConceptJudgments], dict[int, list[str]]]:
    """Counted judgments per concept item, and each item's rule question ids."""
    concepts = []
    rule_questions: dict[int, list[str]] = {}
    for result in annotation_selectors.item_results(study.campaign, origin=ORIGIN):
        concepts.append(_judgments(result))
        rule_questions[result.item_id] = list(result.meta.get("rules", {}))
    return concepts, rule_questions


@dataclass(frozen=True)
class StudyResults:
    """Seed 004 Tables 1, 3 and 4–6 for one study (``lexical.studies.rule_validation.results``)."""

    items_total: int
    items_complete: int
    annotators_counted: int
    annotators_excluded: int
    overlap: int
    precision: results.Share
    recall: results.Share
    rules: dict[str, results.Share]
    agreement: dict[str, FamilyAgreement]

    def to_dict(self) -> dict[str, Any]:
        return {
            "items_total": self.items_total,
            "items_complete": self.items_complete,
            "annotators_counted": self.annotators_counted,
            "annotators_excluded": self.annotators_excluded,
            "overlap": self.overlap,
            "precision": self.precision.to_dict(),
            "recall": self.recall.to_dict(),
            "rules": {generator: s.to_dict() for generator, s in self.rules.items()},
            "agreement": {family: a.to_dict() for family, a in self.agreement.items()},
        }


def study_results(study: RuleValidationStudy) -> StudyResults:
    campaign = study.campaign
    overlap = campaign.overlap
    concepts: list[results.ConceptJudgments] = []
    rule_questions: dict[int, list[str]] = {}
    counted: set[str] = set()
    excluded: set[str] = set()
    complete = 0
    for result in annotation_selectors.item_results(campaign, origin=ORIGIN):
        concepts.append(_judgments(result))
        rule_questions[result.item_id] = list(result.meta.get("rules", {}))
        counted.update(j.annotator for j in result.counted)
        excluded.update(result.excluded)
        complete += int(result.validated)
    return StudyResults(
        items_total=len(concepts),
        items_complete=complete,
        annotators_counted=len(counted),
        annotators_excluded=len(excluded - counted),
        overlap=overlap,
        precision=results.precision(concepts, min_votes=overlap),
        recall=results.recall(concepts, min_votes=overlap),
        rules=results.rule_shares(concepts, min_votes=overlap),
        agreement=results.family_agreements(concepts, rule_questions),
    )
