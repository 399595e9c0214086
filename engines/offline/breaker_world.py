"""An offline MT-breaker world: a SIMULATION for tests, the demo and ``make run``. Pure Python.

No real LLM, MT system or QE metric is reachable offline, so three deterministic stand-ins
play their parts, written so that seed 001's effect is visible and explainable:

* the **editor** (a chat model) reads the chat in the paper's formats (``SOURCE |||…|||``,
  ``TRANSLATION |||…|||``, ``SCORE |||x%|||``) and answers by rules: each edit adds one known
  source of translation trouble (a rare word, an idiom, a number, a long clause); a first
  request gets a plain text with at most one of them;
* the **fragile translator** fails on exactly those (leaves rare words and idioms
  untranslated, garbles numbers, drops the tail of long sentences) and "translates" the rest
  word by word through a tiny dictionary;
* the **fragile QE** penalises exactly those failures in a translation;
* asked for a source analysis (``ANALYSE THIS TEXT |||…|||``, the statistics of seed 001
  §3.2), the editor answers JSON computed from the same trouble spots: rare words raise the
  word rarity, long clauses the syntax complexity, every trouble spot lowers the naturalness,
  and its topics come from a small keyword list.

Nothing here is a model of real translation quality; it exists so that the platform's loop,
storage, selection and pages can be exercised end to end without a network.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

__all__ = [
    "FAILURES",
    "analysis_reply",
    "edit_answer",
    "editor_reply",
    "fragile_quality",
    "fragile_translate",
]

FAILURES = ("rare", "idiom", "number", "long")

# common word -> rare synonym (the editor swaps them in; the translator knows only the common).
RARE = {
    "walk": "perambulate", "talk": "confabulate", "big": "gargantuan", "small": "minuscule",
    "house": "domicile", "food": "victuals", "quick": "expeditious", "old": "antediluvian",
    "noise": "susurration", "angry": "splenetic", "tired": "enervated", "boat": "coracle",
    "party": "shindig", "mess": "gallimaufry", "friend": "confrère", "plan": "stratagem",
}  # fmt: skip
RARE_WORDS = {rare: common for common, rare in RARE.items()}
IDIOMS = {
    "once in a blue moon": "rarely", "when pigs fly": "never",
    "spill the beans": "tell the secret", "under the weather": "ill",
    "bite the bullet": "accept it", "a piece of cake": "easy",
    "the ball is in your court": "you decide", "cost an arm and a leg": "cost a lot",
}  # fmt: skip
NUMBERS = ("3.5 million", "1/4", "17:45", "2,718", "0.07", "1.5e3")
CLAUSES = (
    "which, notwithstanding what the committee had insisted upon only a fortnight earlier, "
    "nobody in the room was prepared to contest",
    "although the people who had organised it, and who had promised everyone a refund, "
    "were nowhere to be found by then",
)
PLAIN = (
    "We walk to the old house by the river every morning.",
    "My friend has a small boat and a big plan for the summer.",
    "The party was loud and the food was good.",
    "After work we talk about the noise in the street.",
    "She was tired, so we left the mess for tomorrow.",
    "The quick dog ran past the house and into the park.",
    "Our plan is to walk to the station and take the train.",
    "He was angry about the food at the party.",
)
# A word-by-word "translation" for the words the plain texts use (Czech drops articles, German
# keeps them); anything else, and every word of another language, is copied.
DICTIONARY = {
    "cs": {"we": "my", "the": "", "and": "a", "to": "do", "house": "dům", "river": "řeka",
           "every": "každé", "morning": "ráno", "my": "můj", "friend": "přítel", "has": "má",
           "a": "", "boat": "loď", "plan": "plán", "for": "pro", "summer": "léto",
           "party": "večírek", "was": "byl", "food": "jídlo", "good": "dobré", "loud": "hlučný",
           "work": "práce", "about": "o", "noise": "hluk", "street": "ulice", "she": "ona",
           "tired": "unavená", "so": "tak", "left": "nechali", "mess": "nepořádek",
           "tomorrow": "zítra", "dog": "pes", "ran": "běžel", "into": "do", "park": "park",
           "our": "náš", "is": "je", "walk": "jít", "station": "nádraží", "take": "vzít",
           "train": "vlak", "he": "on", "angry": "naštvaný", "at": "na", "big": "velký",
           "small": "malý", "old": "starý", "quick": "rychlý", "talk": "mluvit", "by": "u",
           "in": "v", "after": "po", "past": "kolem", "of": "", "it": "to", "not": "ne"},
    "de": {"we": "wir", "the": "die", "and": "und", "to": "zu", "house": "Haus", "river": "Fluss",
           "every": "jeden", "morning": "Morgen", "my": "mein", "friend": "Freund", "has": "hat",
           "a": "ein", "boat": "Boot", "plan": "Plan", "for": "für", "summer": "Sommer",
           "party": "Feier", "was": "war", "food": "Essen", "good": "gut", "loud": "laut",
           "work": "Arbeit", "about": "über", "noise": "Lärm", "street": "Straße", "she": "sie",
           "tired": "müde", "so": "also", "left": "ließen", "mess": "Unordnung",
           "tomorrow": "morgen", "dog": "Hund", "ran": "lief", "into": "in", "park": "Park",
           "our": "unser", "is": "ist", "walk": "gehen", "station": "Bahnhof", "take": "nehmen",
           "train": "Zug", "he": "er", "angry": "wütend", "at": "bei", "big": "groß",
           "small": "klein", "old": "alt", "quick": "schnell", "talk": "reden", "by": "am",
           "in": "in", "after": "nach", "past": "vorbei", "of": "von", "it": "es", "not": "nicht"},
}  # fmt: skip
LONG_SENTENCE_WORDS = 28
JOINER = "_"
_SOURCE = re.compile(r"SOURCE\s*:?\s*\|{3,}(.*?)\|{3,}", re.IGNORECASE | re.DOTALL)
_SCORE = re.compile(r"SCORE\s*\|{3,}\s*(-?\d+(?:\.\d+)?)\s*%?\s*\|{3,}", re.IGNORECASE)
_WORDS_ASKED = re.compile(r"about (\d+) words")
_NUMBER = re.compile(r"\d[\d.,:/e]*\d|\d")
_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


_ANALYSE = re.compile(r"ANALYSE THIS TEXT \|{3}(.*?)\|{3}", re.DOTALL)
TOPIC_WORDS = {
    "travel": ("walk", "perambulate", "station", "train"),
    "home": ("house", "domicile", "kitchen", "mess", "gallimaufry"),
    "nature": ("river", "park", "dog"),
    "leisure": ("boat", "coracle", "summer", "holidays"),
    "food and parties": ("party", "shindig", "food", "victuals", "dinner"),
    "city life": ("noise", "susurration", "street", "neighbours"),
    "friendship": ("friend", "confrère", "plan", "stratagem"),
    "feelings": ("angry", "splenetic", "tired", "enervated"),
    "work": ("work", "committee"),
}


def _hash(*parts: object) -> int:
    blob = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big")


# --- the editor ------------------------------------------------------------------------------


def _sources(messages: Sequence[dict[str, str]]) -> list[tuple[str, float | None]]:
    """Each source the editor proposed with the score it was then shown (if any)."""
    found: list[tuple[str, float | None]] = []
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        texts = [t.strip() for t in _SOURCE.findall(message["content"]) if t.strip()]
        if not texts:
            continue
        reply = messages[i + 1]["content"] if i + 1 < len(messages) else ""
        scores = [float(s) for s in _SCORE.findall(reply)]
        # Several systems: the last score shown is their mean.
        found.append((texts[-1], scores[-1] if scores else None))
    return found


def _fresh_text(words: int, salt: int, avoid: str) -> str:
    """A plain text of about ``words`` words with at most one trouble spot."""
    order = sorted(range(len(PLAIN)), key=lambda i: _hash(salt, i))
    order = [i for i in order if PLAIN[i] not in avoid] or order
    sentences: list[str] = []
    for i in order * 4:
        if sum(len(s.split()) for s in sentences) >= words:
            break
        sentences.append(PLAIN[i])
    text = " ".join(sentences)
    return edit_answer(text, salt, words) if salt % 2 else text


def edit_answer(text: str, salt: int, target_words: int) -> str:
    """One rule-based edit that adds a known trouble spot (a long text swaps, not grows)."""
    words = text.split()
    swappable = [i for i, w in enumerate(words) if w.lower().strip(".,;!?") in RARE]
    rules = ["rare", "idiom", "number", "clause"]
    if len(words) > 1.4 * max(target_words, 1):
        rules = ["rare", "number_swap"]
    rule = rules[salt % len(rules)]
    if rule == "rare" and not swappable:
        rule = "idiom" if len(words) <= 1.4 * max(target_words, 1) else "number_swap"
    if rule == "rare":
        i = swappable[(salt >> 8) % len(swappable)]
        core = words[i].lower().strip(".,;!?")
        words[i] = words[i].lower().replace(core, RARE[core])
        return " ".join(words)
    if rule == "number_swap":
        numbers = _NUMBER.findall(text)
        if numbers:
            others = [n for n in NUMBERS if n != numbers[0]]  # an edit must change something
            return text.replace(numbers[0], others[(salt >> 8) % len(others)], 1)
        return text.rstrip(".") + f", roughly {NUMBERS[(salt >> 8) % len(NUMBERS)]} of them."
    cut = max(1, min(len(words) - 1, (salt >> 12) % max(len(words), 1)))
    if rule == "idiom":
        idiom = list(IDIOMS)[(salt >> 8) % len(IDIOMS)]
        insert = [f"{idiom},"] if cut else [idiom]
    elif rule == "number":
        insert = ["about", NUMBERS[(salt >> 8) % len(NUMBERS)]]
    else:
        return text.rstrip(".!?") + ", " + CLAUSES[(salt >> 8) % len(CLAUSES)] + "."
    return " ".join([*words[:cut], *insert, *words[cut:]])


def analysis_reply(text: str) -> str:
    """A source analysis as JSON, computed from the text's trouble spots (deterministic)."""
    lowered = text.lower()
    tokens = [w.strip(".,;!?«»") for w in lowered.split()]
    n = max(len(tokens), 1)
    rare = sum(1 for w in tokens if w in RARE_WORDS)
    idioms = sum(1 for idiom in IDIOMS if idiom in lowered)
    numbers = len(_NUMBER.findall(text))
    clauses = sum(1 for clause in CLAUSES if clause in text)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]
    mean_len = n / max(len(sentences), 1)
    jitter = _hash(text) % 5
    topics = [t for t, keys in TOPIC_WORDS.items() if any(k in tokens for k in keys)]
    topics += ["idioms"] * bool(idioms) + ["numbers"] * bool(numbers)
    modes = ["rare words"] * bool(rare) + ["idioms"] * bool(idioms)
    modes += ["numerical expressions"] * bool(numbers) + ["long sentences"] * bool(clauses)
    answer = {
        "grammaticality": max(40, 97 - 2 * numbers - 3 * clauses - jitter),
        "naturalness": max(5, 92 - 9 * rare - 6 * idioms - 7 * numbers - 12 * clauses - jitter),
        "word rarity": min(100, round(8 + 250 * rare / n + 5 * idioms)),
        "syntax complexity": min(100, round(15 + 1.5 * mean_len + 15 * clauses)),
        "topics": (topics or ["everyday life"])[:5],
        "error modes": modes,
    }
    return json.dumps(answer, ensure_ascii=False)


def editor_reply(messages: Sequence[dict[str, str]]) -> str:
    """The editor's answer to a chat in seed 001's formats (see the module docstring)."""
    first = messages[0]["content"] if messages else ""
    analysed = _ANALYSE.search(first)
    if analysed:
        return analysis_reply(analysed.group(1))
    asked = _WORDS_ASKED.search(first)
    words = int(asked.group(1)) if asked else 30
    salt = _hash(*(m["content"] for m in messages))
    proposed = _sources(messages)
    if not proposed:
        text = _fresh_text(words, salt, avoid=first)
        return f"Here is a text that should be hard to translate.\nSOURCE |||{text}|||"
    last_prompt = messages[-1]["content"]
    base = proposed[-1][0]
    if "lowest score" in last_prompt:
        scored = [(score, i) for i, (_, score) in enumerate(proposed) if score is not None]
        if scored:
            base = proposed[min(scored)[1]][0]
    edited = edit_answer(base, salt, words)
    return f"I made it harder to translate.\nSOURCE |||{edited}|||"


# --- the fragile translator and its QE ----------------------------------------------------


def _translate_sentence(sentence: str, tgt_lang: str, fails: set[str]) -> str:
    lowered = sentence
    for idiom, meaning in IDIOMS.items():
        if idiom in lowered.lower():
            start = lowered.lower().index(idiom)
            # Joined, a failed idiom stays one "word", copied verbatim below.
            replacement = f"«{idiom.replace(' ', JOINER)}»" if "idiom" in fails else meaning
            lowered = lowered[:start] + replacement + lowered[start + len(idiom) :]
    words = lowered.split()
    if "long" in fails and len(words) > LONG_SENTENCE_WORDS:
        words = words[:LONG_SENTENCE_WORDS]
    dictionary = DICTIONARY.get(tgt_lang.split("-")[0], {})
    out: list[str] = []
    for word in words:
        core = word.lower().strip(".,;!?«»")
        if _NUMBER.fullmatch(core):
            out.append(re.sub(r"[.,:/]", "", word) if "number" in fails else word)
        elif core in RARE_WORDS:
            out.append(word if "rare" in fails else dictionary.get(RARE_WORDS[core], core))
        elif "«" in word or "»" in word:
            out.append(word)
        else:
            translated = dictionary.get(core, core)
            if translated:
                out.append(word.lower().replace(core, translated) if core else word)
    return " ".join(out)


def fragile_translate(text: str, tgt_lang: str, fails_on: Sequence[str] = FAILURES) -> str:
    """A word-by-word pseudo-translation that fails on exactly ``fails_on``."""
    fails = set(fails_on)
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    return " ".join(_translate_sentence(s, tgt_lang, fails) for s in sentences if s)


def fragile_quality(source: str, translation: str) -> float:
    """0–100: 97 minus penalties for the failures visible in ``translation``, with a small
    deterministic jitter so that equal-looking translations do not tie exactly."""
    lowered = translation.lower().replace(JOINER, " ")
    penalty = 0.0
    penalty += 9.0 * sum(1 for word in RARE_WORDS if word in lowered)
    penalty += 12.0 * sum(1 for idiom in IDIOMS if f"«{idiom}»" in lowered)
    penalty += 10.0 * sum(1 for n in _NUMBER.findall(source) if n not in translation)
    missing = len(source.split()) - len(translation.split()) - source.lower().count(" the ")
    penalty += min(30.0, 1.5 * max(0, missing - 4))
    jitter = (_hash(source, translation) % 401) / 100.0 - 2.0
    return max(0.0, min(100.0, 97.0 - penalty + jitter))
