"""ESA (error span annotation): error spans with minor/major severity plus a 0–100 score.

Answer: ``{"spans": [{"start", "end", "severity": "minor"|"major", "missing"?}],
"score": 0..100, "confirmed_low_score"?: bool}``. A score below :data:`LOW_SCORE` with no span
must be confirmed (the page asks).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from annotation.protocols.base import AnswerContext, Cleaned
from annotation.protocols.items import as_int
from annotation.protocols.segments import SpanProtocol, export_spans

SEVERITIES = ("minor", "major")
LOW_SCORE = 66
"""Scores below "most meaning preserved" with no error span marked ask for confirmation."""
ANCHORS = ((0, "No meaning preserved"), (33, "Some meaning preserved"),
           (66, "Most meaning preserved, few errors"), (100, "Perfect"))  # fmt: skip


class ESA(SpanProtocol):
    name = "esa"
    label = "ESA (error spans + 0–100 score)"

    page_features: ClassVar[tuple[str, ...]] = ("spans", "score")

    def clean_answer(self, answer: Mapping[str, Any], context: AnswerContext) -> Cleaned:
        errors: list[str] = []
        missing: list[str] = []
        spans = self.clean_spans(answer.get("spans", []), context, errors, missing)
        cleaned: dict[str, Any] = {"spans": spans}
        self.clean_score(answer, cleaned, errors, missing)
        return cleaned, errors, missing

    def clean_score(
        self,
        answer: Mapping[str, Any],
        cleaned: dict[str, Any],
        errors: list[str],
        missing: list[str],
    ) -> None:
        """The 0–100 score (and its low-score confirmation) into ``cleaned``, in place; the
        spans must already be in ``cleaned["spans"]``."""
        score = answer.get("score")
        if score is None or score == "":
            missing.append("give a 0–100 score")
            cleaned["score"] = None
            return
        value = as_int(score)
        if value is None or not 0 <= value <= 100:
            errors.append("the score must be a whole number from 0 to 100")
            cleaned["score"] = None
            return
        cleaned["score"] = value
        confirmed = bool(answer.get("confirmed_low_score"))
        cleaned["confirmed_low_score"] = confirmed
        if value < LOW_SCORE and not cleaned["spans"] and not confirmed:
            missing.append(f"confirm the score {value} although no error span is marked")

    def answer_from_post(self, post: Any) -> dict[str, Any]:
        score = post.get("score", "")
        return {
            "spans": [],
            "score": int(score) if score.isdigit() else None,
            "confirmed_low_score": post.get("confirmed_low_score") == "on",
        }

    def answer_submission_scores(
        self, campaign: Any, answer: Mapping[str, Any]
    ) -> tuple[float | None, float | None]:
        return float(answer["score"]), None

    def answer_score(
        self, campaign: Any, answer: Mapping[str, Any], stored: float | None
    ) -> float | None:
        value = answer.get("score")
        return float(value) if value is not None else stored

    def annotation_columns(self, campaign: Any, item: Any, annotation: Any) -> dict[str, Any]:
        answer = annotation.answer or {}
        score = self.score(campaign, answer, annotation.score)
        return {
            "esa_score": score,
            "esa_spans": export_spans(answer.get("spans", [])),
            "score": score,
        }

    def page_context(self, campaign: Any, item: Any, annotation: Any) -> dict[str, Any]:
        return {"anchors": ANCHORS}
