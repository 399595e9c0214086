"""An offline lexical-selection world: a SIMULATION for tests, the demo and ``make run``. Pure.

No real LLM is reachable offline, so a deterministic stand-in answers the two prompt shapes of
seed 004 that the lexical app sends to chat engines:

1. **rule writing** (App. B.3 Fig. 9, as ``lexical.rules.prompts`` words it): the user message
   names the concept (``Concept: "date"``) and lists each variation as a block::

       Variation: khorma
       Source sentences where it is used:
       1. We ate fresh dates from the palm.
       2. ...

   The world answers a JSON object (in a ```json fence) keyed by the variation labels, each rule
   naming the variation's most frequent content words: "Use «khorma» when the sentence is
   about: palm, fresh, sweet." A word counts once per sentence; the concept's own word and
   words found in every variation's sentences carry no signal and are skipped; ties go
   alphabetically. ``rule_words`` (default 3) is how many words a rule names.

2. **lexical selection** (Fig. 7/8): the user message contains ``Please select the best
   translation of "<concept>" in "<source text>" from the following list: <translations>.``
   with ``<translations>`` a JSON list of variation labels; with rules, a block starting with
   the line ``Rules:`` and lines ``- <label>: <rule text>``. The world answers a short
   reasoning and its choice between triple backticks (```khorma```):

   * with rules: the option whose rule's content words overlap the source's most (ties: the
     first listed);
   * without rules: with probability ``skill`` (a stable hash of engine name and source decides)
     the same overlap cue, here between the source's words and the option labels' forms by
     character trigrams (a cognate cue; ties: the first listed); otherwise, or when nothing
     overlaps, an option picked by a stable hash of (engine name, source) among the sorted
     labels, so the pick does not depend on the order the options were shown in.

Nothing here models real lexical knowledge; it exists so that rule generation, evaluation with
and without rules, and their pages run end to end without a network, with accuracies that
differ between world engines of different ``skill``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence

__all__ = [
    "DEFAULT_RULE_WORDS",
    "DEFAULT_SKILL",
    "content_words",
    "rules_reply",
    "selection_reply",
    "world_reply",
]

DEFAULT_SKILL = 0.5
DEFAULT_RULE_WORDS = 3
MAX_SENTENCES = 500  # per variation: more than any rule prompt sends
# How much larger a word's share of one variation's sentences must be than of any other's for
# the word to describe that variation in a rule.
MIN_LEAD = 0.2

# Function words and the rule template's own words: they say nothing about a variation.
STOPWORDS = frozenset(
    """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers him his how i if in into is it its itself just me
    more most my no nor not now of off on once only or other our ours out over own same she
    should so some such than that the their theirs them then there these they this those
    through to too under until up very was we were what when where which while who whom why
    will with would you your yours one two per via yet let got get gets
    use used sentence sentences variation fits usual sense rule rules word words
    """.split()
)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_CONCEPT = re.compile(r'^Concept: "(.*?)"', re.MULTILINE)
_VARIATION = re.compile(r"^Variation: (.+?)\s*$", re.MULTILINE)
_SENTENCE = re.compile(r"^\s*\d+\.\s+(.*?)\s*$")
_SELECT = re.compile(
    r'[Pp]lease select the best translation of "(?P<concept>.*?)" in "(?P<source>.*)" '
    r"from the following list: (?P<options>\[.*?\])\.",
    re.DOTALL,
)
_RULES_HEADER = re.compile(r"^Rules:\s*$", re.MULTILINE)


def _hash(*parts: object) -> int:
    blob = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big")


def content_words(text: str) -> list[str]:
    """Lower-cased words of three letters or more that are not function words, in order."""
    return [
        w
        for w in (m.group(0).lower() for m in _WORD.finditer(text))
        if len(w) >= 3 and w not in STOPWORDS
    ]


# --- 1. rule writing --------------------------------------------------------------------------


def _variation_blocks(text: str) -> list[tuple[str, list[str]]]:
    """(label, sentences) per ``Variation:`` block of a rule prompt, in prompt order."""
    heads = list(_VARIATION.finditer(text))
    blocks = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        sentences = []
        for line in text[head.end() : end].splitlines():
            match = _SENTENCE.match(line)
            if match and match.group(1):
                sentences.append(match.group(1))
        blocks.append((head.group(1).strip(), sentences[:MAX_SENTENCES]))
    return blocks


def _is_concept_word(word: str, concept_words: Sequence[str]) -> bool:
    return any(word == c or word.startswith(c) for c in concept_words)


def write_rules(
    concept: str, blocks: Sequence[tuple[str, Sequence[str]]], rule_words: int
) -> dict[str, str]:
    """A rule per variation label naming its most distinctive content words: those in a larger
    share of its own sentences than of any other variation's (by at least ``MIN_LEAD``), so
    words every sentence happens to share never make a rule."""
    concept_words = [w.lower() for w in _WORD.findall(concept) if len(w) >= 3]
    shares: list[dict[str, float]] = []
    for _, sentences in blocks:
        counter: Counter[str] = Counter()
        for sentence in sentences:
            counter.update(set(content_words(sentence)))
        n = max(1, len(sentences))
        shares.append({w: c / n for w, c in counter.items()})
    rules = {}
    for index, (label, _) in enumerate(blocks):
        own = shares[index]
        others = [share for i, share in enumerate(shares) if i != index]
        lead = {
            w: own[w] - max((other.get(w, 0.0) for other in others), default=0.0)
            for w in own
            if not _is_concept_word(w, concept_words)
        }
        ranked = sorted((w for w in lead if lead[w] >= MIN_LEAD), key=lambda w: (-lead[w], w))
        if ranked[:rule_words]:
            words = ", ".join(ranked[:rule_words])
            rules[label] = f"Use «{label}» when the sentence is about: {words}."
        else:
            rules[label] = f"Use «{label}» when no other variation fits."
    return rules


def rules_reply(text: str, rule_words: int = DEFAULT_RULE_WORDS) -> str | None:
    """The answer to a rule prompt (``text``: its messages joined), or None if it is not one."""
    blocks = _variation_blocks(text)
    if not blocks:
        return None
    concept = _CONCEPT.search(text)
    rules = write_rules(concept.group(1) if concept else "", blocks, rule_words)
    return "```json\n" + json.dumps(rules, ensure_ascii=False, indent=2) + "\n```"


# --- 2. lexical selection ---------------------------------------------------------------------


def _rules_block(text: str, options: Sequence[str]) -> dict[str, str]:
    """``- <label>: <rule>`` lines after a ``Rules:`` line, for labels among ``options``."""
    header = _RULES_HEADER.search(text)
    if not header:
        return {}
    rules: dict[str, str] = {}
    for line in text[header.end() :].lstrip("\n").splitlines():
        if not line.startswith("- "):
            break
        # Longest label first, so "a/b" is not read as "a" followed by "/b: ...".
        for option in sorted(options, key=len, reverse=True):
            if line.startswith(f"- {option}:"):
                rules.setdefault(option, line[len(option) + 3 :].strip())
                break
    return rules


def _trigrams(word: str) -> set[str]:
    padded = f"#{word}#"
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def _cognate_score(source_words: set[str], option: str) -> float:
    """The best trigram Jaccard between a source word and one of the option's forms."""
    best = 0.0
    for form in option.split("/"):
        grams = _trigrams(form.strip().lower())
        for word in source_words:
            other = _trigrams(word)
            best = max(best, len(grams & other) / len(grams | other))
    return best


def _first_best(options: Sequence[str], scores: Sequence[float]) -> int:
    top = max(scores)
    return next(i for i, s in enumerate(scores) if s == top)


def choose(
    source: str, options: Sequence[str], rules: dict[str, str], engine: str, skill: float
) -> tuple[str, str]:
    """(choice, one line of reasoning) for a selection prompt."""
    words = set(content_words(source))
    if rules:
        overlaps = []
        for option in options:
            forms = {f.strip().lower() for f in option.split("/")}
            rule_words = set(content_words(rules.get(option, ""))) - forms
            overlaps.append(words & rule_words)
        best = _first_best(options, [len(o) for o in overlaps])
        shared = ", ".join(sorted(overlaps[best])) or "nothing the rules name"
        return options[
            best
        ], f"The source mentions {shared}; the rule for {options[best]} fits best."
    if _hash(engine, source, "skill") / 2**64 < skill:
        scores = [_cognate_score(words, option) for option in options]
        if max(scores) > 0:  # no overlap at all is no cue: guess as below
            best = _first_best(options, scores)
            return options[best], f"The source's wording is closest to {options[best]}."
    ranked = sorted(options)
    pick = ranked[_hash(engine, source) % len(ranked)]
    return pick, f"From what I know of these words, {pick} is the usual choice here."


def selection_reply(text: str, engine: str, skill: float = DEFAULT_SKILL) -> str | None:
    """The answer to a Fig. 7/8 prompt (``text``: the user message), or None if not one."""
    match = _SELECT.search(text)
    if not match:
        return None
    try:
        options = json.loads(match.group("options"))
    except ValueError:
        options = None
    if not (isinstance(options, list) and options and all(isinstance(o, str) for o in options)):
        return "I cannot read the list of translations."
    rules = _rules_block(text, options)
    choice, reasoning = choose(match.group("source"), options, rules, engine, skill)
    return f"{reasoning}\n```{choice}```"


# --- dispatch ----------------------------------------------------------------------------------


def world_reply(
    messages: Sequence[dict[str, str]],
    engine: str,
    *,
    skill: float = DEFAULT_SKILL,
    rule_words: int = DEFAULT_RULE_WORDS,
) -> str:
    """The world's answer to a conversation: a selection if the last user message asks for one,
    rules if the conversation holds a rule prompt (a re-ask gets the same rules again)."""
    users = [m.get("content", "") for m in messages if m.get("role") == "user"]
    last = users[-1] if users else ""
    selected = selection_reply(last, engine, skill)
    if selected is not None:
        return selected
    prompt = "\n\n".join(m.get("content", "") for m in messages if m.get("role") != "assistant")
    written = rules_reply(prompt, rule_words)
    if written is not None:
        return written
    return "I can only write lexical rules or choose between translations."
