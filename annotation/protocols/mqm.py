"""MQM: error spans with category, subcategory and severity; the score is computed.

Answer: ``{"spans": [{"start", "end", "severity", "category", "subcategory", "missing"?,
"side"?, "comment"?}], "no_errors": bool}``; with no span, ``no_errors`` must be true (an
explicit "no error" instead of an untouched form). ``"side": "source"`` puts a span's offsets
into the item's source (an omission or a source error, as Google marks them). Google's labels
are accepted and stored in the typology's spelling: ``Style/Awkward``, ``Terminology/
Inconsistent use of terminology``, ``Source error`` and the ``Neutral`` severity (the last two
cost nothing). The weighted penalty and its 0–100 mapping come from ``annotation/scoring.py``
with the campaign's weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from annotation import scoring
from annotation.protocols.base import AnswerContext, Cleaned, is_non_scorable
from annotation.protocols.segments import SpanProtocol, export_spans, mqm_label
from annotation.protocols.spans import is_source_side

TSV_FORMAT = "mqm-tsv"


class MQM(SpanProtocol):
    name = "mqm"
    label = "MQM (typed error spans)"
    uses_mqm_weights = True
    extra_export_formats = (("Google MQM (TSV)", TSV_FORMAT, False),)
    page_features: ClassVar[tuple[str, ...]] = ("spans", "typology", "no_errors")
    source_spans = True
    accepted_severities = (scoring.NEUTRAL,)

    def severities(self, campaign: Any) -> list[str]:
        if campaign.mqm_allow_critical:
            return ["minor", "major", "critical"]
        return ["minor", "major"]

    def prefill_labels(self, span: Mapping[str, Any]) -> dict[str, str]:
        # A pre-filled span may leave the category to the annotator (an ESA-AI style hint),
        # but a category it names must be one the page offers, or the span can never be
        # submitted as it is. The campaign's own severities are checked by the import service.
        labels = super().prefill_labels(span)
        if not labels.get("category"):
            return labels
        scoring.validate_span({**span, "severity": "minor"}, allow_critical=True)
        labels["category"], subcategory = scoring.canonical_labels(span)
        if subcategory:
            labels["subcategory"] = subcategory
        return labels

    def clean_span(
        self, span: Mapping[str, Any], clean: dict[str, Any], context: AnswerContext
    ) -> tuple[list[str], list[str]]:
        errors: list[str] = []
        missing: list[str] = []
        category = str(span.get("category") or "")
        subcategory = str(span.get("subcategory") or "")
        if not category:
            missing.append("choose a category")
        else:
            try:
                # Google's labels (Style/Awkward, Source error, ...) are stored in our spelling.
                category, subcategory = scoring.canonical_labels(span)
                scoring.validate_span(
                    {"category": category, "subcategory": subcategory,
                     "severity": clean["severity"] or "minor"},
                    allow_critical="critical" in context.severities,
                )  # fmt: skip
            except ValueError as exc:
                errors.append(str(exc))
            if scoring.MQM_TYPOLOGY.get(category) and not subcategory:
                missing.append(f"choose a subcategory of {category}")
        clean["category"] = category
        clean["subcategory"] = subcategory
        comment = span.get("comment")
        if comment:
            clean["comment"] = str(comment)[:2000]
        return errors, missing

    def clean_answer(self, answer: Mapping[str, Any], context: AnswerContext) -> Cleaned:
        errors: list[str] = []
        missing: list[str] = []
        spans = self.clean_spans(answer.get("spans", []), context, errors, missing)
        no_errors = bool(answer.get("no_errors"))
        if spans and no_errors:
            errors.append("'no errors' is ticked but error spans are marked")
        if not spans and not no_errors:
            missing.append("mark error spans, or tick 'no errors'")
        return {"spans": spans, "no_errors": no_errors}, errors, missing

    def answer_from_post(self, post: Any) -> dict[str, Any]:
        return {"spans": [], "no_errors": post.get("no_errors") == "on"}

    def answer_submission_scores(
        self, campaign: Any, answer: Mapping[str, Any]
    ) -> tuple[float | None, float | None]:
        penalty = scoring.mqm_score(answer["spans"], campaign.weights())
        return scoring.mqm_to_100(penalty), penalty

    def answer_score(
        self, campaign: Any, answer: Mapping[str, Any], stored: float | None
    ) -> float | None:
        # Recomputed with the campaign's current weights: editing them re-scores the exports.
        return scoring.mqm_score_100(answer.get("spans", []), campaign.weights())

    def annotation_columns(self, campaign: Any, item: Any, annotation: Any) -> dict[str, Any]:
        answer = annotation.answer or {}
        spans = answer.get("spans", [])
        penalty = None if is_non_scorable(answer) else scoring.mqm_score(spans, campaign.weights())
        return {
            "mqm_spans": export_spans(spans),
            "mqm_score": penalty,
            "no_errors": bool(answer.get("no_errors")),
            "score": self.score(campaign, answer, annotation.score),
        }

    def aggregate_columns(
        self, campaign: Any, item: Any, annotations: Sequence[Any]
    ) -> dict[str, Any]:
        if not annotations:
            return {}
        weights = campaign.weights()
        judged = [a for a in annotations if not is_non_scorable(a.answer)]
        if not judged:
            return {"mean_mqm_score": None}
        penalties = [scoring.mqm_score(a.answer.get("spans", []), weights) for a in judged]
        return {"mean_mqm_score": round(sum(penalties) / len(penalties), 6)}


def google_tsv_rows(
    base: list[Any], source: str, target: str, spans: list[dict[str, Any]]
) -> list[list[Any]]:
    """Rows of Google's MQM TSV for one annotation: one per span (with its comment), or a
    ``No-error`` row.

    ``base`` holds the leading columns (system, doc, doc_id, seg_id, rater); the span is
    wrapped in ``<v>…</v>`` in the source or the target, the side it marks (a [MISSING] span
    marks nothing: Google's omissions are marked in the source).
    """
    if not spans:
        return [[*base, source, target, "No-error", "No-error", ""]]
    rows = []
    for span in spans:
        severity = str(span.get("severity") or "").capitalize()
        if is_source_side(span):
            texts = [_mark(source, span), target]
        else:
            texts = [source, _mark(target, span)]
        rows.append(
            [*base, *texts, mqm_label(span, google=True), severity, span.get("comment", "")]
        )
    return rows


def _mark(text: str, span: Mapping[str, Any]) -> str:
    if span.get("missing"):
        return text
    start, end = span["start"], span["end"]
    return f"{text[:start]}<v>{text[start:end]}</v>{text[end:]}"
