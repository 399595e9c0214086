"""The rule-writing prompt (seed 004 §3, App. B.3 Fig. 9) and a strict reader of its answer.

Pure Python (no Django). The prompt holds every variation of one concept with its source
sentences, as blocks the offline ``lexical_world`` engine also reads::

    Concept: "date" (English → Farsi)

    Variation: khorma
    Source sentences where it is used:
    1. ...

The answer is hostile input: :func:`parse_rules` takes the JSON object out of it (a ```json
fence is tolerated), parses it strictly (duplicate keys, NaN and deep nesting refused), and
matches its keys to the variations:

* a key matches a variation when, trimmed and with spaces around ``/`` removed, it equals the
  variation's label (its surface forms joined with ``/``) or, as an alias, its lemma — models
  often write the dictionary form; an alias that is another variation's label or another
  variation's lemma too is ambiguous and not accepted;
* every variation is named exactly once, no other key appears, in any order;
* each value is a non-empty string of at most :data:`MAX_RULE_CHARS` characters.

Any problem raises :class:`RuleAnswerError` whose message is written for the model: the
re-ask (:func:`reask_message`) quotes it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from formats import strict_json

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_RULE_CHARS",
    "RuleAnswerError",
    "RulePrompt",
    "VariationSentences",
    "parse_rules",
    "reask_message",
    "rule_messages",
]

MAX_RULE_CHARS = 2000
# An answer longer than this is not a handful of rules: refused before any parsing.
MAX_ANSWER_CHARS = 50_000
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_SLASH = re.compile(r"\s*/\s*")

LANGUAGE_NAMES = {
    "af": "Afrikaans", "ar": "Arabic", "cs": "Czech", "de": "German", "en": "English",
    "es": "Spanish", "fa": "Farsi", "fr": "French", "gl": "Galician", "hi": "Hindi",
    "it": "Italian", "ja": "Japanese", "lv": "Latvian", "pl": "Polish", "pt": "Portuguese",
    "ru": "Russian", "ta": "Tamil", "te": "Telugu", "uk": "Ukrainian", "zh": "Chinese",
}  # fmt: skip


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code.split("-")[0].lower(), code)


@dataclass(frozen=True)
class VariationSentences:
    label: str
    lemma: str
    sentences: tuple[str, ...]


@dataclass(frozen=True)
class RulePrompt:
    concept: str
    src_lang: str
    tgt_lang: str
    variations: tuple[VariationSentences, ...]
    labels: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", tuple(v.label for v in self.variations))


class RuleAnswerError(ValueError):
    """The answer does not give one rule per variation; the message tells the model why."""


def _system_text(prompt: RulePrompt) -> str:
    target = language_name(prompt.tgt_lang)
    source = language_name(prompt.src_lang)
    keys = json.dumps(list(prompt.labels), ensure_ascii=False)
    return (
        f"You describe when a translator should choose each {target} word that translates one "
        f"{source} concept. Answer with a JSON object and nothing else. Its keys must be exactly "
        f"these, written as given: {keys}. The value for each key is a string in {source} "
        f"that explains how the meaning and usage of that {target} word differ from the "
        f"others, with a short example of the word in {target} and its {source} translation "
        f"(add a transliteration into Latin letters if {target} is not written in them)."
    )


def _user_text(prompt: RulePrompt) -> str:
    source = language_name(prompt.src_lang)
    target = language_name(prompt.tgt_lang)
    parts = [
        f'Concept: "{prompt.concept}" ({source} → {target})',
        f"Each {target} variation below is followed by {source} sentences whose translation "
        "uses it.",
    ]
    for variation in prompt.variations:
        lines = [f"Variation: {variation.label}", "Source sentences where it is used:"]
        lines += [f"{i}. {' '.join(s.split())}" for i, s in enumerate(variation.sentences, 1)]
        if not variation.sentences:
            lines.append("(no example sentences)")
        parts.append("\n".join(lines))
    parts.append("Write the JSON object with one rule per variation.")
    return "\n\n".join(parts)


def rule_messages(
    prompt: RulePrompt, *, system_prompt_in_user: bool = False
) -> list[dict[str, str]]:
    """The conversation that asks for the rules; without a system prompt (Gemma, App. B.3)
    its text goes first in the user message."""
    system, user = _system_text(prompt), _user_text(prompt)
    if system_prompt_in_user:
        return [{"role": "user", "content": f"{system}\n\n{user}"}]
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def reask_message(prompt: RulePrompt, problem: str) -> dict[str, str]:
    """The follow-up after a refused answer, saying what was wrong."""
    keys = json.dumps(list(prompt.labels), ensure_ascii=False)
    return {
        "role": "user",
        "content": (
            f"Your answer could not be used: {problem}. Answer again with only a JSON object "
            f"whose keys are exactly {keys} and whose values are the rules as strings."
        ),
    }


def _json_text(answer: str) -> str:
    fenced = _FENCE.search(answer)
    if fenced:
        return fenced.group(1).strip()
    start, end = answer.find("{"), answer.rfind("}")
    if start < 0 or end < start:
        raise RuleAnswerError("it contains no JSON object")
    return answer[start : end + 1]


def _normal(key: str) -> str:
    return _SLASH.sub("/", key.strip())


def _key_index(variations: Sequence[VariationSentences]) -> dict[str, int]:
    """Accepted key → variation index: every label, and each unambiguous lemma."""
    index = {_normal(v.label): i for i, v in enumerate(variations)}
    lemmas: dict[str, list[int]] = {}
    for i, v in enumerate(variations):
        lemmas.setdefault(_normal(v.lemma), []).append(i)
    for lemma, owners in lemmas.items():
        if lemma and len(owners) == 1 and lemma not in index:
            index[lemma] = owners[0]
    return index


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_rules(answer: str, prompt: RulePrompt) -> dict[str, str]:
    """Label → rule text for every variation of ``prompt``; :class:`RuleAnswerError` otherwise."""
    if len(answer) > MAX_ANSWER_CHARS:
        raise RuleAnswerError(
            f"it is {len(answer)} characters long; rules must fit in {MAX_ANSWER_CHARS}"
        )
    try:
        value = strict_json.loads(_json_text(answer))
    except strict_json.JSONInputError as exc:
        raise RuleAnswerError(f"it is not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise RuleAnswerError("the JSON is not an object keyed by variation")
    index = _key_index(prompt.variations)
    rules: dict[str, str] = {}
    unknown: list[str] = []
    for key, text in value.items():
        i = index.get(_normal(key))
        if i is None:
            unknown.append(key)
            continue
        label = prompt.labels[i]
        if label in rules:
            raise RuleAnswerError(f"the variation {label!r} is given twice (as {key!r})")
        if not isinstance(text, str) or not text.strip():
            raise RuleAnswerError(f"the rule for {label!r} is not a non-empty string")
        if len(text) > MAX_RULE_CHARS:
            raise RuleAnswerError(
                f"the rule for {label!r} is {len(text)} characters long (at most {MAX_RULE_CHARS})"
            )
        rules[label] = text.strip()
    missing = [label for label in prompt.labels if label not in rules]
    problems = []
    if unknown:
        names = ", ".join(repr(_short(k)) for k in unknown[:5])
        problems.append(f"unknown key(s) {names}")
    if missing:
        problems.append(f"missing key(s) {', '.join(repr(m) for m in missing)}")
    if problems:
        raise RuleAnswerError("; ".join(problems))
    return rules
