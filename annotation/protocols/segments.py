"""What ESA and MQM share: a translation whose errors are marked as spans (pure Python).

Expected answers of checks and tutorials (``Item.expected``): ``{"score_min"?, "score_max"?,
"spans"?: [{"start", "end"}], "no_spans"?, "explanation"?}``; every listed span must be
overlapped by an annotator span, the score (0–100; for MQM the mapped score) must be within the
bounds. Generated checks use ``{"type": "corrupted", "original_item_id": id, "spans": [...]}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from annotation import scoring
from annotation.protocols.base import (
    NON_SCORABLE,
    NON_SCORABLE_REASON,
    AnswerContext,
    Protocol,
    SubmittedCheck,
    is_non_scorable,
)
from annotation.protocols.items import ItemError, as_int
from annotation.protocols.spans import SOURCE, all_overlapped, is_source_side, span_errors

_EXPECTED_KEYS = {"score_min", "score_max", "spans", "no_spans", "explanation", "type",
                  "original_item_id"}  # fmt: skip


class SpanProtocol(Protocol):
    """A protocol whose answers mark error spans in ``item.target`` (see ``spans.py``)."""

    uses_document_context: ClassVar[bool] = True
    generated_checks: ClassVar[bool] = True
    allows_non_scorable: ClassVar[bool] = True
    extra_csv_columns: ClassVar[tuple[str, ...]] = (NON_SCORABLE, NON_SCORABLE_REASON)
    # MQM marks omissions and source errors in the source, as Google's annotators do.
    source_spans: ClassVar[bool] = False
    # Severities an answer may carry beyond the campaign's (Google's Neutral for MQM); the
    # annotating page does not offer them.
    accepted_severities: ClassVar[tuple[str, ...]] = ()

    # --- import ------------------------------------------------------------------------------

    def check_item_text(self, item: dict[str, Any]) -> None:
        if not item["target"].strip():
            raise ItemError("target is required for esa and mqm items")
        missing_ids = [f for f in ("doc_id", "seg_id") if not item[f]]
        if missing_ids:
            raise ItemError(f"{' and '.join(missing_ids)} required for esa and mqm items")

    def normalize_prefill(self, prefill: Any, item: dict[str, Any]) -> list[dict[str, Any]]:
        errors = span_errors(prefill, item["target"], where="prefill_spans")
        severities = (*scoring.SEVERITIES, *self.accepted_severities)
        spans = []
        for number, span in enumerate([] if errors else prefill, start=1):
            severity = scoring.canonical_severity(span.get("severity", "minor"))
            clean = {"start": span["start"], "end": span["end"], "severity": severity,
                     **({"missing": True} if span.get("missing") else {})}  # fmt: skip
            if severity not in severities:
                errors.append(f"prefill_spans[{number}]: unknown severity {span.get('severity')!r}")
                continue
            try:
                clean |= self.prefill_labels(span)
            except ValueError as exc:
                errors.append(f"prefill_spans[{number}]: {exc}")
            spans.append(clean)
        if errors:
            raise ItemError("; ".join(errors))
        return spans

    def prefill_labels(self, span: Mapping[str, Any]) -> dict[str, str]:
        """The labels a pre-filled span keeps beside its offsets and severity; ``ValueError``
        for labels the protocol does not know (MQM checks its typology)."""
        return {k: str(span[k]) for k in ("category", "subcategory") if span.get(k)}

    def normalize_expected(self, expected: Any, item: dict[str, Any]) -> Any:
        if not isinstance(expected, Mapping):
            raise ItemError("expected must be an object with score_min/score_max/spans/no_spans")
        if expected.get("type", "corrupted") != "corrupted" or (
            "type" in expected and as_int(expected.get("original_item_id")) is None
        ):
            raise ItemError("expected.type 'corrupted' needs an integer original_item_id")
        unknown_keys = sorted(set(expected) - _EXPECTED_KEYS)
        if unknown_keys:
            raise ItemError(f"unknown key(s) in expected: {', '.join(unknown_keys)}")
        if not set(expected) - {"explanation", "type", "original_item_id"}:
            raise ItemError("expected needs at least one of score_min, score_max, spans, no_spans")
        for key in ("score_min", "score_max"):
            value = expected.get(key)
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0 <= value <= 100
            ):
                raise ItemError(f"expected.{key} must be a number between 0 and 100")
        if "spans" in expected:
            errors = span_errors(expected["spans"], item["target"], where="expected.spans")
            if errors:
                raise ItemError("; ".join(errors))
        return dict(expected)

    # --- answers -----------------------------------------------------------------------------

    def clean_spans(
        self, raw_spans: Any, context: AnswerContext, errors: list[str], missing: list[str]
    ) -> list[dict[str, Any]]:
        """The answer's spans, normalized; problems are appended to ``errors``/``missing``."""
        source = context.source if self.source_spans else None
        errors += span_errors(raw_spans, context.target, source=source)
        spans: list[dict[str, Any]] = []
        if errors:
            return spans
        severities = (*context.severities, *self.accepted_severities)
        for number, span in enumerate(raw_spans, start=1):
            clean: dict[str, Any] = {"start": span["start"], "end": span["end"]}
            if span.get("missing"):
                clean["missing"] = True
            if is_source_side(span):
                clean["side"] = SOURCE
            severity = scoring.canonical_severity(span.get("severity"))
            if severity not in severities:
                errors.append(f"span {number}: severity must be one of {', '.join(severities)}")
            clean["severity"] = severity
            label_errors, label_missing = self.clean_span(span, clean, context)
            errors += [f"span {number}: {problem}" for problem in label_errors]
            missing += [f"span {number}: {problem}" for problem in label_missing]
            spans.append(clean)
        return spans

    def clean_span(
        self, span: Mapping[str, Any], clean: dict[str, Any], context: AnswerContext
    ) -> tuple[list[str], list[str]]:
        """Protocol fields of one span (MQM's category), added to ``clean`` in place.

        Returns the span's (errors, missing); :meth:`clean_spans` says which span they are of.
        """
        return [], []

    # --- scores ------------------------------------------------------------------------------
    # A flagged answer has no score whatever the protocol: subclasses implement the
    # ``answer_*`` hooks for answers that were judged.

    def submission_scores(
        self, campaign: Any, answer: Mapping[str, Any]
    ) -> tuple[float | None, float | None]:
        if is_non_scorable(answer):
            return None, None
        return self.answer_submission_scores(campaign, answer)

    def score(self, campaign: Any, answer: Mapping[str, Any], stored: float | None) -> float | None:
        if is_non_scorable(answer):
            return None
        return self.answer_score(campaign, answer, stored)

    def answer_submission_scores(
        self, campaign: Any, answer: Mapping[str, Any]
    ) -> tuple[float | None, float | None]:
        """:meth:`submission_scores` of an answer that is not flagged non-scorable."""
        return None, None

    def answer_score(
        self, campaign: Any, answer: Mapping[str, Any], stored: float | None
    ) -> float | None:
        """:meth:`score` of an answer that is not flagged non-scorable."""
        return stored

    # --- quality control ---------------------------------------------------------------------

    def check_answer(self, check: SubmittedCheck) -> bool | None:
        if is_non_scorable(check.answer):
            return False  # checks and tutorials are built to be scored: the flag misses them
        expected: dict[str, Any] = check.item.expected
        score = check.score
        spans = check.answer.get("spans", [])
        if not all_overlapped(expected.get("spans", []), spans):
            return False
        if expected.get("type") == "corrupted":
            reference_score = check.reference()
            if reference_score is None or score is None:
                return None
            return score < reference_score
        if expected.get("no_spans") and spans:
            return False
        if expected.get("score_min") is not None and (
            score is None or score < expected["score_min"]
        ):
            return False
        return expected.get("score_max") is None or (
            score is not None and score <= expected["score_max"]
        )

    # --- exports -----------------------------------------------------------------------------

    def flatten(self, row: dict[str, Any]) -> None:
        spans = row.get("esa_spans", row.get("mqm_spans"))
        if spans is not None:
            row["spans"] = spans
            row["n_spans"] = len(spans)


def export_spans(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Spans in the WMT ESA release's shape: an omission has start_i = end_i = "missing"."""
    out = []
    for span in spans:
        missing = bool(span.get("missing"))
        entry: dict[str, Any] = {
            "start_i": "missing" if missing else span["start"],
            "end_i": "missing" if missing else span["end"],
            "severity": span.get("severity"),
        }
        if is_source_side(span):
            entry["side"] = SOURCE
        if span.get("category"):
            entry["category"] = mqm_label(span)
        if span.get("comment"):
            entry["comment"] = span["comment"]
        out.append(entry)
    return out


def mqm_label(span: Mapping[str, Any], *, google: bool = False) -> str:
    """Our category label: ``Category/Subcategory``, ``Non-translation!``, ``Other``.

    With ``google``, the two subtypes Google's files spell differently take Google's spelling
    (``Style/Awkward``), so the MQM TSV reads like theirs.
    """
    category = span.get("category") or ""
    if scoring.canonical_category(category) == scoring.NON_TRANSLATION:
        return "Non-translation!"
    subcategory = span.get("subcategory") or ""
    if google:
        subcategory = scoring.GOOGLE_SPELLING.get((category, subcategory), subcategory)
    return f"{category}/{subcategory}" if subcategory else category
