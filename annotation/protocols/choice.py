"""Choice: select one (or several) of the item's options, with a confidence rating.

Answer: ``{"selected": [indices into item.choices], "confidence": 1..k | null, "comment": str}``;
indices refer to the item's original option order, whatever order the annotator saw (kept in
``Annotation.option_order``). The confidence scale is 1–5 by default; a campaign may label it
(``Campaign.confidence_labels``, least to most confident, e.g. seed 004 Fig. 4's "No idea" …
"Likely but uncertain" …), the answer then being the chosen label's 1-based rank. Expected
answers of checks and tutorials: an option string, a list of them, or
``{"selected": [...], "explanation"?}``, stored as ``{"selected": [option strings]}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from annotation import agreement
from annotation.protocols.base import AnswerContext, Cleaned, Protocol, SubmittedCheck
from annotation.protocols.items import ItemError, as_int

CONFIDENCE_LEVELS = (1, 2, 3, 4, 5)
MAX_CHOICES = 20
MAX_CONFIDENCE_LABELS = 10
CONFIDENCE_LABEL_MAX_LENGTH = 200
ATTESTED_KEY = "attested"
"""``item.meta[ATTESTED_KEY]``: the option attested in the data (seed 004: the variation of the
original sentence pair), which the ``attested_wins`` tie rule prefers."""
HIGHLIGHT_KEY = "source_highlight"
"""``item.meta[HIGHLIGHT_KEY]``: ``[start, end]`` codepoint offsets of the word the question is
about in ``item.source`` (seed 004 Fig. 4: the concept word); the annotate page marks it."""


def valid_highlight(value: Any, text: str) -> tuple[int, int] | None:
    """``(start, end)`` when ``value`` is two ints with 0 ≤ start < end ≤ len(text), else ``None``.

    The offsets come from imported files and are not trusted: anything else (null, floats,
    bools, strings, reversed or out-of-range offsets) just leaves the sentence unmarked.
    """
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    start, end = value
    if type(start) is not int or type(end) is not int:
        return None
    if not 0 <= start < end <= len(text):
        return None
    return start, end


def highlighted_source(item: Any) -> tuple[str, str, str] | None:
    """(before, marked, after) of ``item.source`` for a valid ``meta["source_highlight"]``."""
    meta = item.meta if isinstance(getattr(item, "meta", None), dict) else {}
    span = valid_highlight(meta.get(HIGHLIGHT_KEY), item.source)
    if span is None:
        return None
    start, end = span
    return item.source[:start], item.source[start:end], item.source[end:]


def confidence_scale(labels: Any) -> list[tuple[int, str]]:
    """(value, label) of a campaign's confidence scale; ``[]`` or ``None`` is the 1–5 default.

    Raises ``ValueError`` naming the problem: labels must be 2 to 10 distinct non-empty
    strings of at most 200 characters.
    """
    if labels in (None, []):
        return [(level, str(level)) for level in CONFIDENCE_LEVELS]
    if not isinstance(labels, list) or not all(isinstance(v, str) and v.strip() for v in labels):
        raise ValueError("confidence labels must be a list of non-empty strings")
    if not 2 <= len(labels) <= MAX_CONFIDENCE_LABELS:
        raise ValueError(
            f"confidence labels: give 2 to {MAX_CONFIDENCE_LABELS} labels, got {len(labels)}"
        )
    if len({v.strip() for v in labels}) != len(labels):
        raise ValueError("confidence labels must be distinct")
    too_long = [v for v in labels if len(v) > CONFIDENCE_LABEL_MAX_LENGTH]
    if too_long:
        raise ValueError(
            f"confidence label {too_long[0][:40]!r}… is longer than "
            f"{CONFIDENCE_LABEL_MAX_LENGTH} characters"
        )
    return [(n, v.strip()) for n, v in enumerate(labels, start=1)]


def confidence_label(campaign: Any, value: Any) -> str | None:
    """The label of a stored confidence value under the campaign's scale (``None`` if unset)."""
    if value is None:
        return None
    return dict(confidence_scale(getattr(campaign, "confidence_labels", None))).get(value)


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
            if confidence is None or not 1 <= confidence <= context.confidence_levels:
                errors.append(f"confidence must be 1 to {context.confidence_levels}")
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

    # --- quality control ---------------------------------------------------------------------

    def check_answer(self, check: SubmittedCheck) -> bool | None:
        choices = check.item.choices
        chosen = {choices[i] for i in check.answer.get("selected", []) if i < len(choices)}
        wanted = set(check.item.expected.get("selected", []))
        if check.campaign.multi_select:
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
            "confidence_label": confidence_label(campaign, answer.get("confidence")),
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
            vote = agreement.majority_vote(
                keys,
                tie_rule=getattr(campaign, "tie_rule", agreement.NO_MAJORITY),
                attested=(item.meta or {}).get(ATTESTED_KEY),
            )
        columns = {
            "majority": vote.display() if vote.n else None,
            "majority_votes": vote.votes,
            "tie": vote.tie,
            "item_agreement": agreement.item_agreement(keys),
        }
        if getattr(campaign, "tie_rule", agreement.NO_MAJORITY) == agreement.ATTESTED_WINS:
            # Which majorities the tie rule decided, so a reader can leave them out again.
            columns["tie_broken"] = vote.tie_broken
        return columns

    def flatten(self, row: dict[str, Any]) -> None:
        if "selected" in row:
            row["selected"] = "|".join(row["selected"])

    # --- page --------------------------------------------------------------------------------

    def page_context(self, campaign: Any, item: Any, annotation: Any) -> dict[str, Any]:
        options = [(index, item.choices[index]) for index in annotation.option_order] or list(
            enumerate(item.choices)
        )
        return {
            "options": options,
            # The template escapes each part; the mark is the only markup added.
            "source_parts": highlighted_source(item),
            "confidence_levels": CONFIDENCE_LEVELS,
            "confidence_scale": confidence_scale(getattr(campaign, "confidence_labels", None)),
        }
