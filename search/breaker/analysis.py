"""The LLM source analysis of seed 001 App. B, in our own words: prompt and answer parsing. Pure.

One prompt per text asks for a JSON object with the four 0–100 scales (grammaticality,
naturalness, word rarity, syntax complexity), 1–5 topics, and the translation error modes the
text is likely to provoke (App. B asks this of the translation in a second prompt; here the
source is analysed once, so the statistics need no translation). Model output is untrusted:
:func:`parse_analysis` accepts code fences, prose around the object, the trailing commas of the
paper's own example, and ``word rarity`` / ``word_rarity`` spellings, and rejects everything
else with a :class:`ParseFailure` whose reason names the field; the caller re-asks a bounded
number of times with :func:`reask`.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from search.breaker.parsing import ParseFailure
from search.breaker.statistics import SCALES, Analysis

__all__ = ["ERROR_MODES", "PROMPT_VERSION", "analysis_prompt", "parse_analysis", "reask"]

PROMPT_VERSION = "breaker-analysis-v1"
MAX_TOPICS = 5
MAX_LABEL_CHARS = 80
ERROR_MODES = (
    "idioms", "metaphor", "gender", "ambiguity", "named entities", "numerical expressions",
    "dates and times", "cultural references", "tone and register", "rare words",
    "terminology", "syntax", "long sentences", "wordplay", "negation", "pronoun resolution",
    "punctuation", "lexical choice",
)  # fmt: skip

_PROMPT = """Look closely at the text at the end of this message and describe it as one JSON \
object with exactly these keys:
- "grammaticality": 0 (word salad) to 100 (no grammatical error at all);
- "naturalness": 0 (nobody would ever write this) to 100 (reads like something a person wrote \
and could be found in a corpus);
- "word rarity": how uncommon the words are on average, 0 (everyday words) to 100 (words a \
typical reader would not know);
- "syntax complexity": 0 (the simplest possible sentence) to 100 (very convoluted structure);
- "topics": a list of 1 to 5 short topics the text is about;
- "error modes": a list of the reasons a machine translation of this text into {tgt} would \
likely go wrong, from these (add others if needed; an empty list if none): {modes}.
Scores are numbers. Answer with the JSON object only, no code fences and no comments.
ANALYSE THIS TEXT |||{text}|||"""

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def analysis_prompt(text: str, tgt_lang_name: str) -> list[dict[str, str]]:
    content = _PROMPT.format(tgt=tgt_lang_name, modes=", ".join(ERROR_MODES), text=text)
    return [{"role": "user", "content": content}]


def reask(reason: str) -> str:
    return (
        f"I could not use that answer: {reason}. Answer again with only the JSON object and "
        'its keys "grammaticality", "naturalness", "word rarity", "syntax complexity", '
        '"topics" and "error modes".'
    )


def _object(answer: str) -> dict[str, Any]:
    fenced = _FENCE.search(answer)
    body = fenced.group(1) if fenced else answer
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise ParseFailure("the answer holds no JSON object")
    blob = _TRAILING_COMMA.sub(r"\1", body[start : end + 1])
    try:
        data = json.loads(blob)
    except json.JSONDecodeError as exc:
        raise ParseFailure(
            f"the JSON object does not parse ({exc.msg} at char {exc.pos})"
        ) from None
    if not isinstance(data, dict):
        raise ParseFailure("the answer is not a JSON object")
    return {" ".join(str(k).lower().replace("_", " ").replace("-", " ").split()): v
            for k, v in data.items()}  # fmt: skip


def _scale(data: dict[str, Any], key: str) -> float:
    name = key.replace("_", " ")
    if name not in data:
        raise ParseFailure(f'"{name}" is missing')
    value = data[name]
    if isinstance(value, str):
        try:
            value = float(value.strip().rstrip("%"))
        except ValueError:
            raise ParseFailure(f'"{name}" must be a number from 0 to 100, got {value!r}') from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ParseFailure(f'"{name}" must be a number from 0 to 100, got {value!r}')
    if not 0 <= value <= 100:
        raise ParseFailure(f'"{name}" must be from 0 to 100, got {value}')
    return float(value)


def _labels(data: dict[str, Any], name: str, *, at_least: int) -> tuple[str, ...]:
    if name not in data:
        raise ParseFailure(f'"{name}" is missing')
    value = data[name]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ParseFailure(f'"{name}" must be a list of strings')
    labels = tuple(v.strip()[:MAX_LABEL_CHARS] for v in value if v.strip())
    if len(labels) < at_least:
        raise ParseFailure(f'"{name}" must list at least {at_least}')
    return labels


def parse_analysis(answer: str) -> Analysis:
    """The analysis in an LLM answer, or :class:`ParseFailure` naming what is wrong."""
    data = _object(answer)
    scales = {key: _scale(data, key) for key in SCALES}
    topics = _labels(data, "topics", at_least=1)[:MAX_TOPICS]
    modes = _labels(data, "error modes", at_least=0)
    return Analysis(**scales, topics=topics, error_modes=modes)
