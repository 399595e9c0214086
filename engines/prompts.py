"""Our prompts for the OpenAI-compatible chat kind, and strict parsers for their output formats.

Pure Python. The sentences are ours; the output formats are the papers':

* translation between ``<START OF TRANSLATION>`` and ``</END OF TRANSLATION>`` (seed 000 App. D);
* GEMBA-style quality estimation on 0–100 ending in ``SCORE |||x|||`` (seed 000 App. D,
  seed 001 App. B "LLM-as-QE");
* LLM-judge difficulty: a proficiency level on 0–120 ending in ``[[[86, C1 (Advanced)]]]``,
  optionally told the target language (seed 002 §4.3, Example 2).

Each prompt has a version that is part of the response-cache key: change a prompt's wording and
bump its version, so cached answers to the old wording are never served for the new one.

Parsers raise :class:`UnparseableOutput` (a permanent :class:`EngineError` once retries are
exhausted); the call path retries the call a bounded number of times before giving up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engines.interfaces import Message, PermanentEngineError

__all__ = [
    "JUDGE_PROMPT_VERSION",
    "QE_PROMPT_VERSION",
    "TRANSLATE_PROMPT_VERSION",
    "Prompt",
    "UnparseableOutput",
    "judge_prompt",
    "language_name",
    "parse_judge",
    "parse_score",
    "parse_translation",
    "proficiency_to_quality",
    "qe_prompt",
    "translate_prompt",
]

TRANSLATE_PROMPT_VERSION = "translate-v1"
QE_PROMPT_VERSION = "qe-gemba-v1"
JUDGE_PROMPT_VERSION = "judge-v1"

_LANGUAGE_NAMES = {
    "ar": "Arabic", "bn": "Bengali", "cs": "Czech", "da": "Danish", "de": "German",
    "el": "Greek", "en": "English", "es": "Spanish", "et": "Estonian", "fa": "Persian",
    "fi": "Finnish", "fr": "French", "he": "Hebrew", "hi": "Hindi", "hr": "Croatian",
    "hu": "Hungarian", "id": "Indonesian", "is": "Icelandic", "it": "Italian", "ja": "Japanese",
    "ko": "Korean", "lt": "Lithuanian", "lv": "Latvian", "nl": "Dutch", "no": "Norwegian",
    "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak",
    "sl": "Slovenian", "sr": "Serbian", "sv": "Swedish", "sw": "Swahili", "th": "Thai",
    "tr": "Turkish", "uk": "Ukrainian", "vi": "Vietnamese", "zh": "Chinese",
}  # fmt: skip


class UnparseableOutput(PermanentEngineError):
    """The model answered, but not in the format the prompt asked for."""


@dataclass(frozen=True)
class Prompt:
    version: str
    messages: list[Message]


def language_name(code: str) -> str:
    """English name of a language code (``"cs"`` → ``"Czech"``); unknown codes pass through."""
    base = code.replace("_", "-").split("-")[0].lower()
    return _LANGUAGE_NAMES.get(base, code)


# --- Translation -----------------------------------------------------------------------------

_TRANSLATE_TEMPLATE = """\
Translate the following {src} text into {tgt}. Keep the meaning, tone and formatting of the \
original; translate everything and add nothing. Write only the translation, and put it between \
the markers <START OF TRANSLATION> and </END OF TRANSLATION>.

{src} text:
{text}"""

_START = re.compile(r"<\s*START\s+OF\s+TRANSLATION\s*>", re.IGNORECASE)
_END = re.compile(r"<\s*/?\s*END\s+OF\s+TRANSLATION\s*>", re.IGNORECASE)


def translate_prompt(text: str, src_lang: str, tgt_lang: str) -> Prompt:
    content = _TRANSLATE_TEMPLATE.format(
        src=language_name(src_lang), tgt=language_name(tgt_lang), text=text
    )
    return Prompt(TRANSLATE_PROMPT_VERSION, [{"role": "user", "content": content}])


def parse_translation(output: str) -> str:
    """The text after the last start marker, up to the next end marker (or the end).

    Models sometimes echo the instruction (so the *last* start marker counts), drop the end
    marker when they hit the token limit, or wrap the answer in a code fence.
    """
    starts = list(_START.finditer(output))
    if not starts:
        raise UnparseableOutput("no <START OF TRANSLATION> marker in the model output")
    rest = output[starts[-1].end() :]
    end = _END.search(rest)
    body = rest[: end.start()] if end else rest
    body = body.strip()
    if body.startswith("```") and body.endswith("```") and len(body) >= 6:
        body = body[3:-3].strip()
    if not body:
        raise UnparseableOutput("the translation between the markers is empty")
    return body


# --- GEMBA-style quality estimation ----------------------------------------------------------

_QE_TEMPLATE = """\
Rate the quality of a machine translation from {src} into {tgt} on a continuous scale from 0 \
to 100. As a guide:
100 - perfect: no errors at all
95 - excellent: meaning fully preserved, at most a negligible nuance
80 - very good: a minor stylistic or word-choice issue
60 - fair: some inaccuracies or fluency errors
40 - poor: several inaccuracies or fluency errors
0 - inadequate: unrelated to the source or completely wrong
First list the errors you find in the translation and how severe each one is, a few words per \
error and no more than ten lines in total. Then finish with a single line of exactly this form:
SCORE |||70.8|||
That line is read by a program, so keep the three vertical bars on both sides of the number.

SOURCE: |||{source}|||
TRANSLATION: |||{translation}|||"""

_SCORE = re.compile(r"SCORE\s*:?\s*\|\|\|\s*(-?\d+(?:[.,]\d+)?)\s*%?\s*\|\|\|", re.IGNORECASE)


def qe_prompt(source: str, translation: str, src_lang: str, tgt_lang: str) -> Prompt:
    content = _QE_TEMPLATE.format(
        src=language_name(src_lang),
        tgt=language_name(tgt_lang),
        source=source,
        translation=translation,
    )
    return Prompt(QE_PROMPT_VERSION, [{"role": "user", "content": content}])


def parse_score(output: str) -> float:
    """The number in the last ``SCORE |||x|||`` line, clamped to [0, 100]."""
    return _last_number(_SCORE, output, "no 'SCORE |||x|||' line in the model output", 100.0)


def _last_number(pattern: re.Pattern[str], output: str, missing: str, high: float) -> float:
    """The number ``pattern`` captures last in ``output`` (a decimal comma read as a point),
    clamped to [0, high]; ``UnparseableOutput(missing)`` where there is none."""
    found = pattern.findall(output)
    if not found:
        raise UnparseableOutput(missing)
    return min(high, max(0.0, float(found[-1].replace(",", "."))))


# --- LLM-as-a-judge difficulty ---------------------------------------------------------------

_JUDGE_TEMPLATE = """\
Estimate how much language proficiency a person needs to translate the text below{into}. Look \
at what makes it hard: vocabulary, grammar, how much meaning is packed into it, domain terms, \
cultural references, idioms and unusual constructions; comment briefly on each factor that \
matters. Then give one number from 0 to 120, where higher means harder, and the matching CEFR \
level: 0-20 A1 (Beginner), 21-40 A2 (Elementary), 41-60 B1 (Intermediate), 61-80 B2 (Upper \
Intermediate), 81-100 C1 (Advanced), 101-120 C2 (Mastery). End with the number and the level \
inside triple square brackets, for example [[[86, C1 (Advanced)]]].

Text ({src}):
{text}"""

_JUDGE = re.compile(r"\[\[\[\s*(-?\d+(?:[.,]\d+)?)")

PROFICIENCY_MAX = 120.0


def judge_prompt(text: str, src_lang: str, tgt_lang: str | None) -> Prompt:
    into = f" into {language_name(tgt_lang)}" if tgt_lang else ""
    content = _JUDGE_TEMPLATE.format(into=into, src=language_name(src_lang), text=text)
    return Prompt(JUDGE_PROMPT_VERSION, [{"role": "user", "content": content}])


def parse_judge(output: str) -> float:
    """The proficiency level (0–120, clamped) in the last ``[[[n, level]]]``."""
    missing = "no '[[[score, level]]]' statement in the model output"
    return _last_number(_JUDGE, output, missing, PROFICIENCY_MAX)


def proficiency_to_quality(proficiency: float) -> float:
    """Map proficiency 0–120 (higher = harder) to quality-like 0–100 (higher = easier)."""
    return 100.0 * (1.0 - proficiency / PROFICIENCY_MAX)
