"""Translation task: the annotator reads a source and writes its translation (no score).

Items have a source and no target; the answer is ``{"translation": str, "comment"?: str}``.
The answers are the data (exported per annotation as JSONL/CSV, ``translation`` column); a
producer turns them into a human "system" (e.g. MT-breaker's ``Human`` translations).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from annotation.protocols.base import AnswerContext, Cleaned, Protocol
from annotation.protocols.items import ItemError

MAX_TRANSLATION_LENGTH = 20_000


class Translation(Protocol):
    name = "translation"
    label = "Translation task (write a translation)"
    has_scores = False
    extra_csv_columns = ("translation",)
    page_features: ClassVar[tuple[str, ...]] = ("translation",)

    def check_item_text(self, item: dict[str, Any]) -> None:
        if item["target"].strip():
            raise ItemError("translation items have no target: the annotator writes it")

    def clean_answer(self, answer: Mapping[str, Any], context: AnswerContext) -> Cleaned:
        errors: list[str] = []
        missing: list[str] = []
        cleaned: dict[str, Any] = {}
        for field in ("translation", "comment"):
            value = answer.get(field) or ""
            if not isinstance(value, str):
                errors.append(f"{field} must be text")
                value = ""
            if len(value) > MAX_TRANSLATION_LENGTH:
                errors.append(f"{field} is longer than {MAX_TRANSLATION_LENGTH} characters")
                value = ""
            cleaned[field] = value
        cleaned["translation"] = cleaned["translation"].strip()
        if not cleaned["translation"]:
            missing.append("write the translation")
        return cleaned, errors, missing

    def answer_from_post(self, post: Any) -> dict[str, Any]:
        return {"translation": post.get("translation", ""), "comment": post.get("comment", "")}

    def annotation_columns(self, campaign: Any, item: Any, annotation: Any) -> dict[str, Any]:
        answer = annotation.answer or {}
        return {
            "translation": answer.get("translation", ""),
            "comment": answer.get("comment", ""),
            "score": None,
        }
