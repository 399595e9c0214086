"""The lexical-selection prompts of seed 004 (Fig. 7 without rules, Fig. 8 with rules) and the
reminder of App. B.3.

The fixed sentence is what ``engines.offline.lexical_world`` (and a reader comparing with the paper)
recognises::

    Please select the best translation of "<concept>" in "<source>" from the following list:
    ["a", "b"].

(one line in the prompt).

``<translations>`` is a JSON list of the variation labels in the shuffled option order. With
rules, a block ``Rules:`` with one line ``- <label>: <rule>`` per option comes first. Everything
goes in one user message, so models without a system prompt (Gemma, App. B.3) need nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

__all__ = ["INSTRUCTION", "PROMPT_VERSION", "reask_messages", "reminder", "selection_messages"]

PROMPT_VERSION = "lexical-selection-v1"
INSTRUCTION = (
    "Carefully explain your reasoning first and then enclose your final answer like this "
    "```answer```."
)


def translations_list(labels: Sequence[str]) -> str:
    """``["viaje", "recorrido"]``: JSON, non-ASCII kept as written."""
    return json.dumps(list(labels), ensure_ascii=False)


def _one_line(text: str) -> str:
    # A rule or a source with line breaks would split the block the model (and the world) reads.
    return " ".join(text.split())


def selection_prompt(
    concept: str, source: str, labels: Sequence[str], rules: Mapping[str, str] | None = None
) -> str:
    """The user prompt; ``rules`` maps a label to its rule (shown in the options' order)."""
    ask = (
        f'Please select the best translation of "{_one_line(concept)}" in '
        f'"{_one_line(source)}" from the following list: {translations_list(labels)}. '
        f"{INSTRUCTION}"
    )
    if not rules:
        return ask
    lines = [f"- {label}: {_one_line(rules[label])}" for label in labels if label in rules]
    return "Rules:\n" + "\n".join(lines) + "\n\nBased on the provided rules above. " + ask


def selection_messages(
    concept: str, source: str, labels: Sequence[str], rules: Mapping[str, str] | None = None
) -> list[dict[str, str]]:
    return [{"role": "user", "content": selection_prompt(concept, source, labels, rules)}]


def reminder(labels: Sequence[str]) -> str:
    """App. B.3: appended to the prompt when the answer was not in the template."""
    return (
        f"Please enclose your selected translation from {translations_list(labels)} "
        "with 3 back ticks."
    )


def reask_messages(
    messages: Sequence[dict[str, str]], labels: Sequence[str]
) -> list[dict[str, str]]:
    """The same conversation with the reminder appended to the last user prompt (the paper
    appends it to the prompt and resamples once, rather than adding a turn)."""
    out = [dict(m) for m in messages]
    out[-1]["content"] = f"{out[-1]['content']}\n\n{reminder(labels)}"
    return out
