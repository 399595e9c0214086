"""Choice: select one (or several) of the item's options, with a confidence rating.

Answer: ``{"selected": [indices into item.choices], "confidence": 1..5 | null, "comment": str}``;
indices refer to the item's original option order, whatever order the annotator saw (kept in
``Annotation.option_order``). Expected answers of checks and tutorials: an option string, a list
of them, or ``{"selected": [...], "explanation"?}``, stored as ``{"selected": [option strings]}``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from annotation import agreement
from annotation.protocols.base import AnswerContext, Cleaned, Protocol
from annotation.protocols.items import ItemError, as_int

CONFIDENCE_LEVELS = (1, 2, 3, 4, 5)
MAX_CHOICES = 20


def labels(item: Any, indices: Iterable[int]) -> list[str]:
    """Option labels of ``indices`` into ``item.choices`` (unknown indices are skipped)."""
    return [item.choices[i] for i in indices if 0 <= i < len(item.choices)]


class Choice(Protocol):
    name = "choice"
    label = "Choice (select options)"
    has_scores = False
    has_options = True
    page_features: ClassVar[tuple[str, ...]] = ("choice",)

    # --- import ------------------------------------------------------------------------------

    def normalize_choices(self, choices: Any) -> list[str]:
        if not isinstance(choices, list) or not all(isinstance(c, str) and c for c in choices):
            raise ItemError("choices must be a list of non-empty strings")
        if not 2 <= len(choices) <= MAX_CHOICES:
            raise ItemError(f"choices needs 2 to {MAX_CHOICES} options, got {len(choices)}")
        if len(set(choices)) != len(choices):
            raise ItemError("choices must be distinct")
        return list(choices)

    def normalize_expected(self, expected: Any, item: dict[str, Any]) -> Any:
        if isinstance(expected, str):
            selected = [expected]
        elif isinstance(expected, list):
            selected = expected
        elif isinstance(expected, Mapping) and isinstance(expected.get("selected"), list):
            selected = expected["selected"]
        else:
            raise ItemError("expected must be an option, a list of options or {'selected': [...]}")
        unknown = [s for s in selected if s not in item["choices"]]
        if not selected or unknown:
            raise ItemError(f"expected option(s) not among the choices: {unknown or selected}")
        normalized: dict[str, Any] = {"selected": list(selected)}
        if isinstance(expected, Mapping) and expected.get("explanation"):
            normalized["explanation"] = str(expected["explanation"])
        return normalized

    # --- answers -----------------------------------------------------------------------------

    def clean_answer(self, answer: Mapping[str, Any], context: AnswerContext) -> Cleaned:
        errors: list[str] = []
        missing: list[str] = []
        raw_selected = answer.get("selected", [])
        selected: list[int] = []
        if not isinstance(raw_selected, list):
            errors.append("selected must be a list of option indices")
        else:
            for value in raw_selected:
                index = as_int(value)
                if index is None or not 0 <= index < context.n_choices:
                    errors.append(f"option {value!r} does not exist")
                elif index not in selected:
                    selected.append(index)
        if not context.multi_select and len(selected) > 1:
            errors.append("choose only one option")
        if not selected:
            missing.append(
                "choose an option" if not context.multi_select else "choose at least one option"
            )
        confidence = answer.get("confidence")
        if confidence in (None, ""):
            confidence = None
            if context.ask_confidence:
                missing.append("rate your confidence")
        else:
            confidence = as_int(confidence)
            if confidence not in CONFIDENCE_LEVELS:
                errors.append("confidence must be 1 to 5")
                confidence = None
        comment = answer.get("comment") or ""
        if not isinstance(comment, str):
            errors.append("comment must be text")
            comment = ""
        cleaned = {"selected": selected, "confidence": confidence, "comment": comment[:5000]}
        return cleaned, errors, missing

    def answer_from_post(self, post: Any) -> dict[str, Any]:
        return {
            "selected": [int(v) for v in post.getlist("selected") if v.isdigit()],
            "confidence": int(post["confidence"]) if post.get("confidence", "").isdigit() else None,
            "comment": post.get("comment", ""),
        }

    def score(self, campaign: Any, answer: Mapping[str, Any], stored: float | None) -> float | None:
        return None

    # --- quality control ---------------------------------------------------------------------

    def check_answer(
        self,
        campaign: Any,
        item: Any,
        answer: Mapping[str, Any],
        *,
        score: float | None,
        reference: Callable[[], float | None],
    ) -> bool | None:
        chosen = {item.choices[i] for i in answer.get("selected", []) if i < len(item.choices)}
        wanted = set(item.expected.get("selected", []))
        if campaign.multi_select:
            return chosen == wanted
        return len(chosen) == 1 and chosen <= wanted

    # --- exports -----------------------------------------------------------------------------

    def annotation_columns(self, campaign: Any, item: Any, annotation: Any) -> dict[str, Any]:
        answer = annotation.answer or {}
        selected = answer.get("selected", [])
        return {
            "question": item.question,
            "choices": item.choices,
            "selected": labels(item, selected),
            "selected_indices": selected,
            "option_order": labels(item, annotation.option_order or []),
            "confidence": answer.get("confidence"),
            "comment": answer.get("comment", ""),
            "score": None,
        }

    def aggregate_columns(
        self, campaign: Any, item: Any, annotations: Sequence[Any]
    ) -> dict[str, Any]:
        if not annotations:
            return {}
        answers = [labels(item, a.answer.get("selected", [])) for a in annotations]
        if campaign.multi_select:
            vote = agreement.majority_multi(answers)
            keys = ["|".join(sorted(a)) for a in answers]
        else:
            keys = [a[0] if a else "" for a in answers]
            vote = agreement.majority(keys)
        return {
            "majority": vote.display() if vote.n else None,
            "majority_votes": vote.votes,
            "tie": vote.tie,
            "item_agreement": agreement.item_agreement(keys),
        }

    def flatten(self, row: dict[str, Any]) -> None:
        if "selected" in row:
            row["selected"] = "|".join(row["selected"])

    # --- page --------------------------------------------------------------------------------

    def page_context(self, campaign: Any, item: Any, annotation: Any) -> dict[str, Any]:
        options = [(index, item.choices[index]) for index in annotation.option_order] or list(
            enumerate(item.choices)
        )
        return {"options": options, "confidence_levels": CONFIDENCE_LEVELS}
