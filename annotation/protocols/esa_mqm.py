"""ESA+MQM hybrid: MQM-typed error spans (category, subcategory, severity) plus ESA's 0–100
overall score, which is the item's human score (the MQM penalty is kept beside it).

Answer: ``{"spans": [MQM spans], "score": 0..100, "confirmed_low_score"?: bool}``. The span
rules are MQM's and the score rules ESA's (a low score with no span must be confirmed): this
class only composes the two, so a fix to either protocol reaches the hybrid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from annotation import scoring
from annotation.protocols.esa import ESA
from annotation.protocols.mqm import MQM


class ESAMQM(MQM, ESA):
    """MQM's span hooks (``severities``, ``clean_span``, MQM TSV export) come first in the
    method order; the score hooks are ESA's, named explicitly below."""

    name = "esa_mqm"
    label = "ESA+MQM hybrid (typed error spans + 0–100 score)"
    page_features: ClassVar[tuple[str, ...]] = ("spans", "typology", "score")

    clean_answer = ESA.clean_answer  # its spans are cleaned by MQM's clean_span all the same
    answer_from_post = ESA.answer_from_post
    answer_score = ESA.answer_score
    page_context = ESA.page_context

    def answer_submission_scores(
        self, campaign: Any, answer: Mapping[str, Any]
    ) -> tuple[float | None, float | None]:
        penalty = scoring.mqm_score(answer["spans"], campaign.weights())
        return float(answer["score"]), penalty

    def annotation_columns(self, campaign: Any, item: Any, annotation: Any) -> dict[str, Any]:
        answer = annotation.answer or {}
        columns = MQM.annotation_columns(self, campaign, item, annotation)
        del columns["no_errors"]  # the hybrid's "no error" is a high score with no span
        score = self.score(campaign, answer, annotation.score)
        return {
            **columns,
            "esa_score": score,
            "score": score,
        }
