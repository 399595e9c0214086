"""Questionnaire: an item carries a list of questions, every one of which must be answered.

Seed 004's rule-validation study asks, per concept, "is any variation missing?", "which listed
variations do NOT mean the concept?" and, per rule, "is this rule correct?"; this protocol asks
any such list, knowing nothing about lexical selection.

Item field ``questions`` (at most :data:`MAX_QUESTIONS`), each an object:

* ``id`` — unique within the item, 1–64 letters, digits, ``_`` or ``-``;
* ``family`` — the group its agreement is computed in (defaults to ``id``); questions of one
  family have one type;
* ``prompt`` — the question, shown as it is (``dir="auto"``);
* ``type`` — ``yes_no``, ``single`` (one of ``options``) or ``multiple`` (any of ``options``,
  or the explicit "none of these", never both);
* ``options`` — for ``single`` and ``multiple``: 2 to 20 distinct non-empty strings;
* ``none_label`` — for ``multiple``: the wording of "none of these" (default below);
* ``lang`` — optional language tag of the prompt and options (``lang`` attribute).

Answer: ``{"answers": {question id: value}, "comment": str}`` with ``"yes"``/``"no"`` (JSON
``true``/``false`` accepted), an option index, or a list of option indices / ``"none"``
(``["none"]`` accepted). Expected answers of checks and tutorials: ``{"answers": {...}}`` for
some of the questions (``explanation`` optional); the annotator passes when each listed answer
matches.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from annotation import agreement
from annotation.agreement import MULTIPLE, NONE_OF_THESE, SINGLE, YES_NO
from annotation.protocols.base import AnswerContext, Cleaned, Protocol, SubmittedCheck
from annotation.protocols.items import ItemError, as_int

TYPES = (YES_NO, SINGLE, MULTIPLE)
MAX_QUESTIONS = 50
MAX_OPTIONS = 20
PROMPT_MAX_LENGTH = 2000
OPTION_MAX_LENGTH = 500
DEFAULT_NONE_LABEL = "None of these"
YES, NO = "yes", "no"
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_LANG = re.compile(r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8}){0,4}")
_QUESTION_KEYS = {"id", "family", "prompt", "type", "options", "none_label", "lang"}


def _text(question: Mapping[str, Any], key: str, where: str, limit: int) -> str:
    value = question.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ItemError(f"{where}: {key} must be a non-empty string")
    if len(value) > limit:
        raise ItemError(f"{where}: {key} is longer than {limit} characters")
    return value


def _options(question: Mapping[str, Any], where: str) -> list[str]:
    options = question.get("options")
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise ItemError(f"{where}: options must be a list of strings")
    if any(not o.strip() for o in options):
        raise ItemError(f"{where}: options must not be empty")
    if not 2 <= len(options) <= MAX_OPTIONS:
        raise ItemError(f"{where}: give 2 to {MAX_OPTIONS} options, got {len(options)}")
    if len(set(options)) != len(options):
        raise ItemError(f"{where}: options must be distinct")
    too_long = [o for o in options if len(o) > OPTION_MAX_LENGTH]
    if too_long:
        raise ItemError(f"{where}: option longer than {OPTION_MAX_LENGTH} characters")
    return list(options)


def normalize_question(raw: Any, number: int) -> dict[str, Any]:
    """One question validated, every field present; ``ItemError`` names it (1-based)."""
    where = f"questions[{number}]"
    if not isinstance(raw, Mapping):
        raise ItemError(f"{where}: each question must be a JSON object")
    qid = raw.get("id")
    if not isinstance(qid, str) or not _ID.fullmatch(qid):
        raise ItemError(f"{where}: id must be 1–64 letters, digits, '_' or '-', got {qid!r}")
    where = f"{where} (id {qid!r})"
    unknown = sorted(set(raw) - _QUESTION_KEYS)
    if unknown:
        raise ItemError(f"{where}: unknown key(s): {', '.join(map(str, unknown))}")
    kind = raw.get("type")
    if kind not in TYPES:
        raise ItemError(f"{where}: type must be one of {', '.join(TYPES)}, got {kind!r}")
    family = raw.get("family", qid)
    if not isinstance(family, str) or not _ID.fullmatch(family):
        raise ItemError(f"{where}: family must be 1–64 letters, digits, '_' or '-'")
    question: dict[str, Any] = {
        "id": qid,
        "family": family,
        "prompt": _text(raw, "prompt", where, PROMPT_MAX_LENGTH),
        "type": kind,
    }
    if kind == YES_NO:
        for key in ("options", "none_label"):
            if key in raw:
                raise ItemError(f"{where}: a yes_no question has no {key}")
    else:
        question["options"] = _options(raw, where)
    if kind == MULTIPLE:
        label = raw.get("none_label", DEFAULT_NONE_LABEL)
        question["none_label"] = _text({"none_label": label}, "none_label", where, 200)
        if question["none_label"] in question["options"]:
            raise ItemError(f"{where}: none_label repeats an option")
    elif "none_label" in raw:
        raise ItemError(f"{where}: only multiple questions have a none_label")
    if raw.get("lang") not in (None, ""):
        lang = raw["lang"]
        if not isinstance(lang, str) or not _LANG.fullmatch(lang):
            raise ItemError(f"{where}: lang must be a language tag such as 'ja' or 'fa-IR'")
        question["lang"] = lang
    return question


def normalize_questions(raw: Any) -> list[dict[str, Any]]:
    """An item's questions validated; ``ItemError`` for the first problem, named."""
    if not isinstance(raw, list) or not raw:
        raise ItemError("questions must be a non-empty list of question objects")
    if len(raw) > MAX_QUESTIONS:
        raise ItemError(f"questions: at most {MAX_QUESTIONS} per item, got {len(raw)}")
    questions = [normalize_question(q, n) for n, q in enumerate(raw, start=1)]
    repeated = [qid for qid, n in Counter(q["id"] for q in questions).items() if n > 1]
    if repeated:
        raise ItemError(f"questions: duplicate id {repeated[0]!r}")
    types: dict[str, str] = {}
    for question in questions:
        first = types.setdefault(question["family"], question["type"])
        if first != question["type"]:
            raise ItemError(
                f"questions: family {question['family']!r} mixes types {first} and "
                f"{question['type']} (agreement is computed per family)"
            )
    return questions


def clean_value(question: Mapping[str, Any], value: Any) -> tuple[Any, str | None]:
    """(normalized answer to one question, error or None); ``value`` is not None."""
    kind = question["type"]
    if kind == YES_NO:
        if value is True or value == YES:
            return YES, None
        if value is False or value == NO:
            return NO, None
        return None, "answer yes or no"
    n = len(question["options"])
    if kind == SINGLE:
        index = as_int(value)
        if index is None or not 0 <= index < n:
            return None, f"option {value!r} does not exist"
        return index, None
    if value == NONE_OF_THESE or value == [NONE_OF_THESE]:
        return NONE_OF_THESE, None
    if not isinstance(value, list):
        return None, 'give a list of option indices, or "none"'
    if NONE_OF_THESE in value:
        return None, f"choose options or “{question['none_label']}”, not both"
    chosen: list[int] = []
    for raw in value:
        index = as_int(raw)
        if index is None or not 0 <= index < n:
            return None, f"option {raw!r} does not exist"
        if index not in chosen:
            chosen.append(index)
    if not chosen:
        return None, None  # an empty list is not an answer yet
    return sorted(chosen), None


def answer_labels(question: Mapping[str, Any], value: Any) -> Any:
    """A stored answer in words: "yes"/"no", the option, the options, or the none label."""
    if value is None or question["type"] == YES_NO:
        return value
    options = question["options"]
    if question["type"] == SINGLE:
        return options[value] if isinstance(value, int) and 0 <= value < len(options) else None
    if value == NONE_OF_THESE:
        return [question["none_label"]]
    return [options[i] for i in value if isinstance(i, int) and 0 <= i < len(options)]


def answer_key(question: Mapping[str, Any], value: Any) -> str:
    """One hashable spelling of an answer, for majorities and per-item agreement."""
    labels = answer_labels(question, value)
    if isinstance(labels, list):
        return "|".join(labels)
    return "" if labels is None else str(labels)


class Questionnaire(Protocol):
    name = "questionnaire"
    label = "Questionnaire (several questions per item)"
    has_scores = False
    has_questions = True
    extra_csv_columns: ClassVar[tuple[str, ...]] = ("answers",)
    page_features: ClassVar[tuple[str, ...]] = ("questionnaire",)

    # --- import ------------------------------------------------------------------------------

    def normalize_questions(self, questions: Any) -> list[dict[str, Any]]:
        return normalize_questions(questions)

    def normalize_expected(self, expected: Any, item: dict[str, Any]) -> Any:
        if not isinstance(expected, Mapping) or not isinstance(expected.get("answers"), Mapping):
            raise ItemError("expected must be {'answers': {question id: answer}}")
        unknown = sorted(set(expected) - {"answers", "explanation"})
        if unknown:
            raise ItemError(f"unknown key(s) in expected: {', '.join(map(str, unknown))}")
        by_id = {q["id"]: q for q in item["questions"]}
        answers: dict[str, Any] = {}
        for qid, value in expected["answers"].items():
            if qid not in by_id:
                raise ItemError(f"expected.answers: no question with id {qid!r}")
            clean, error = (None, "no answer") if value is None else clean_value(by_id[qid], value)
            if error or clean is None:
                raise ItemError(f"expected.answers[{qid!r}]: {error or 'no answer'}")
            answers[qid] = clean
        if not answers:
            raise ItemError("expected.answers needs at least one answer")
        normalized: dict[str, Any] = {"answers": answers}
        if expected.get("explanation"):
            normalized["explanation"] = str(expected["explanation"])
        return normalized

    # --- answers -----------------------------------------------------------------------------

    def clean_answer(self, answer: Mapping[str, Any], context: AnswerContext) -> Cleaned:
        errors: list[str] = []
        missing: list[str] = []
        raw = answer.get("answers", {})
        if not isinstance(raw, Mapping):
            return {}, ["answers must be an object keyed by question id"], []
        known = {q["id"] for q in context.questions}
        unknown = [qid for qid in raw if qid not in known]
        if unknown:
            more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
            errors.append(f"no question with id {unknown[0]!r}{more}")
        answers: dict[str, Any] = {}
        for number, question in enumerate(context.questions, start=1):
            value = raw.get(question["id"])
            clean, error = (None, None) if value is None else clean_value(question, value)
            if error:
                errors.append(f"question {number} ({question['id']}): {error}")
            elif clean is None:
                missing.append(f"answer question {number}: {question['prompt'][:80]}")
            else:
                answers[question["id"]] = clean
        comment = answer.get("comment") or ""
        if not isinstance(comment, str):
            errors.append("comment must be text")
            comment = ""
        return {"answers": answers, "comment": comment[:5000]}, errors, missing

    def answer_from_post(self, post: Any) -> dict[str, Any]:
        """Plain form fields: ``q.<id>`` (yes/no, option index) and ``qm.<id>`` (checkboxes)."""
        answers: dict[str, Any] = {}
        for name in post:
            if name.startswith("q."):
                value = post.get(name, "")
                answers[name[2:]] = int(value) if value.isdigit() else value
            elif name.startswith("qm."):
                values = post.getlist(name)
                answers[name[3:]] = [int(v) if v.isdigit() else v for v in values]
        return {"answers": answers, "comment": post.get("comment", "")}

    # --- quality control ---------------------------------------------------------------------

    def check_answer(self, check: SubmittedCheck) -> bool | None:
        given = check.answer.get("answers", {})
        wanted = (check.item.expected or {}).get("answers", {})
        return all(given.get(qid) == value for qid, value in wanted.items())

    # --- exports -----------------------------------------------------------------------------

    def annotation_columns(self, campaign: Any, item: Any, annotation: Any) -> dict[str, Any]:
        answer = annotation.answer or {}
        stored = answer.get("answers", {})
        return {
            "questions": item.questions,
            "answers": {q["id"]: answer_labels(q, stored.get(q["id"])) for q in item.questions},
            "answer_values": {q["id"]: stored.get(q["id"]) for q in item.questions},
            "comment": answer.get("comment", ""),
            "score": None,
        }

    def aggregate_columns(
        self, campaign: Any, item: Any, annotations: Sequence[Any]
    ) -> dict[str, Any]:
        """Per question: the majority answer (``"tie"`` when tied) and the share of agreeing
        pairs; ``item_agreement`` is their mean over the item's questions."""
        if not annotations:
            return {}
        majorities: dict[str, str | None] = {}
        agreements: dict[str, float | None] = {}
        for question in item.questions:
            keys = [
                answer_key(question, a.answer.get("answers", {}).get(question["id"]))
                for a in annotations
            ]
            majorities[question["id"]] = agreement.majority(keys).display() or None
            agreements[question["id"]] = agreement.item_agreement(keys)
        present = [v for v in agreements.values() if v is not None]
        return {
            "majority": majorities,
            "tie": any(v == agreement.TIE for v in majorities.values()),
            "question_agreement": agreements,
            "item_agreement": round(sum(present) / len(present), 6) if present else None,
        }

    def flatten(self, row: dict[str, Any]) -> None:
        row.pop("answer_values", None)

    # --- page --------------------------------------------------------------------------------

    def page_context(self, campaign: Any, item: Any, annotation: Any) -> dict[str, Any]:
        draft = (annotation.draft or {}).get("answers", {})
        questions = []
        for number, question in enumerate(item.questions, start=1):
            value = draft.get(question["id"])
            choices: list[tuple[str, str, bool]] = []
            if question["type"] == YES_NO:
                choices = [(YES, "Yes", value == YES), (NO, "No", value == NO)]
            else:
                chosen = value if isinstance(value, list) else [value]
                choices = [
                    (str(i), option, i in chosen) for i, option in enumerate(question["options"])
                ]
            questions.append(
                {
                    **question,
                    "number": number,
                    "choices": choices,
                    "none_checked": value == NONE_OF_THESE,
                }
            )
        return {"questions": questions}
