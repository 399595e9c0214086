"""The MT-breaker and zero-shot prompts (seed 001 App. B), in our own words. Pure Python.

The output formats are the paper's: the LLM ends with ``SOURCE |||<text>|||``, and is shown
``TRANSLATION |||<text>|||`` and, with QE feedback, ``SCORE |||71.3%|||``. ``PROMPT_VERSION``
goes into every request's cache key: change a sentence here and bump it.

A chat is rebuilt from the stored steps each round (:func:`conversation`), so a re-run round
sends byte-identical requests and is answered from the cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engines.prompts import language_name
from search.breaker.parsing import format_score

__all__ = [
    "PROMPT_VERSION",
    "StepView",
    "conversation",
    "first_prompt",
    "follow_up",
    "reask",
    "seed_answer",
]

PROMPT_VERSION = "breaker-v1"
FORMAT = "SOURCE |||<SOURCE_TEXT>|||"

_FIRST = """\
We are collecting {src} texts that a machine translation system finds exceptionally hard to \
translate into {tgt}. Write one such text. It should draw out as many kinds of translation \
error as it can and push the system to its limits, while remaining grammatical and something a \
person could plausibly write. Aim for about {words} words. ({request})
{history}\
End your answer with the text, written like this: {format}"""

_HISTORY = """\
These texts are already in the collection; write something different from all of them:
{texts}
"""

_EDIT = """\
Make the text even harder to translate. Change at most {share}% of the {which}, keep it \
grammatical and natural, and end your answer with the new text, written like this: {format}"""


@dataclass(frozen=True)
class StepView:
    """What the prompts need of a stored step."""

    source: str
    llm_text: str  # the answer the source was read from; empty for a seed
    translations: Sequence[str]  # one per target, in the run's target order
    target_qualities: Sequence[float]  # one per target (mean over QE engines)
    quality: float


def first_prompt(
    src_lang: str, tgt_lang: str, words: int, request: str, earlier: Sequence[str] = ()
) -> str:
    """The opening request, the same for every method (App. B). ``request`` numbers it, so
    items of a set are distinct requests; ``earlier`` lists texts not to repeat (history)."""
    history = ""
    if earlier:
        history = _HISTORY.format(texts="\n".join(f"- {' '.join(t.split())}" for t in earlier))
    return _FIRST.format(
        src=language_name(src_lang),
        tgt=language_name(tgt_lang),
        words=words,
        request=f"Request {request}.",
        history=history,
        format=FORMAT,
    )


def seed_answer(seed: str) -> str:
    """A seeded chain's step 0, put in the chat as if the LLM had proposed the seed."""
    return f"SOURCE |||{seed}|||"


def follow_up(step: StepView, *, qe_feedback: bool, max_edit_share: float) -> str:
    """Show the LLM how its last text was translated (and scored) and ask for an edit."""
    lines: list[str] = []
    if len(step.translations) == 1:
        lines.append("This is the machine translation of the source text:")
        lines.append(f"TRANSLATION |||{step.translations[0]}|||")
        if qe_feedback:
            lines.append(
                f"Its quality score is {format_score(step.quality)} "
                "(0 = bad translation, 100 = perfect)."
            )
    else:
        lines.append(
            f"These are the translations of the source text by {len(step.translations)} "
            "machine translation systems:"
        )
        for i, (text, quality) in enumerate(
            zip(step.translations, step.target_qualities, strict=True), start=1
        ):
            lines.append(f"System {i}: TRANSLATION |||{text}|||")
            if qe_feedback:
                lines.append(f"System {i} quality: {format_score(quality)}")
        if qe_feedback:
            lines.append(
                f"Mean quality score: {format_score(step.quality)} "
                "(0 = bad translation, 100 = perfect)."
            )
    which = "best source so far (the one with the lowest score)" if qe_feedback else "source"
    lines.append(_EDIT.format(share=round(100 * max_edit_share), which=which, format=FORMAT))
    return "\n".join(lines)


def reask(reason: str) -> str:
    return (
        f"I could not read a text from your answer ({reason}). Please answer again and end "
        f"with the text, written like this: {FORMAT}"
    )


def conversation(
    first: str, steps: Sequence[StepView], *, qe_feedback: bool, max_edit_share: float
) -> list[dict[str, str]]:
    """The whole chat that asks for the step after ``steps`` (Alg. 1: history kept)."""
    messages = [{"role": "user", "content": first}]
    for step in steps:
        answer = step.llm_text or seed_answer(step.source)
        messages.append({"role": "assistant", "content": answer})
        messages.append(
            {
                "role": "user",
                "content": follow_up(step, qe_feedback=qe_feedback, max_edit_share=max_edit_share),
            }
        )
    return messages
