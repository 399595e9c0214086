"""Our prompts for the LLM steps of a search, and strict parsers for their answers.

Written in our own words; the output formats follow seed 000 App. D (a nested dictionary for
topic trees, ``{"extracted_snippets": [{"text", "source_url"}]}`` for samples) so answers parse
robustly. Model output is untrusted input: parsers validate types, lengths and URLs.
A change of wording bumps the version, which is part of every cached call's key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlparse

from formats import strict_json

TOPIC_TREE_PROMPT_VERSION = "topic-tree-v1"
SAMPLING_PROMPT_VERSION = "sampling-v1"

MIN_SNIPPET_WORDS = 15  # the prompt asks for 20–40; models miss by a few words either way
MAX_SNIPPET_WORDS = 60


class ModelOutputError(ValueError):
    """The model's answer does not have the required shape."""


def topic_tree_messages(root: str, depth: int, branching: int, language: str) -> list[dict]:
    instructions = (
        f"You build topic taxonomies. Build a tree of subtopics for the domain {root!r}.\n"
        f"- The root key is exactly {root!r}.\n"
        f"- Below the root there are {depth} levels of subtopics; every non-leaf topic has "
        f"exactly {branching} distinct children.\n"
        "- Every topic name must stand on its own as a specific web search query: someone who "
        "does not know its parent must still understand it.\n"
        f"- Write every topic name in {language}.\n"
        "Answer with one JSON object only, nested dictionaries whose keys are topic names and "
        'whose leaves are empty objects, for example {"Root": {"Child A": {"Grandchild": {}}}}. '
        "No comments, no prose."
    )
    return [{"role": "user", "content": f"[{TOPIC_TREE_PROMPT_VERSION}]\n{instructions}"}]


def sampling_messages(topic: str, language: str, count: int, request: int = 0) -> list[dict]:
    """``request`` numbers repeated requests for one topic: later ones ask for other pages."""
    later = (
        f" This is request number {request + 1} for this topic: use pages and passages that "
        "earlier requests are unlikely to have returned."
        if request
        else ""
    )
    instructions = (
        f"Find real web texts about the topic {topic!r} written in {language}. "
        f"Return up to {count} passages, each 20 to 40 words long, each different from the "
        "others, each quoted or closely extracted from a page you can name." + later + " Answer "
        'with JSON only, in exactly this shape: {"extracted_snippets": [{"text": "...", '
        '"source_url": "https://..."}]}'
    )
    return [{"role": "user", "content": f"[{SAMPLING_PROMPT_VERSION}]\n{instructions}"}]


@dataclass(frozen=True)
class Snippet:
    text: str
    source_url: str


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_snippets(answer: str) -> list[Snippet]:
    """Snippets of acceptable length with http(s) URLs, deduplicated, in the model's order."""
    match = _JSON_OBJECT.search(answer)
    if not match:
        raise ModelOutputError("the answer contains no JSON object")
    try:
        data = strict_json.loads(match.group(0))
    except strict_json.JSONInputError as exc:
        raise ModelOutputError(f"the answer is not valid JSON: {exc}") from None
    items = data.get("extracted_snippets") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ModelOutputError('the answer has no "extracted_snippets" list')
    seen: set[str] = set()
    snippets = []
    for item in items:
        snippet = _valid_snippet(item)
        if snippet and normalise(snippet.text) not in seen:
            seen.add(normalise(snippet.text))
            snippets.append(snippet)
    return snippets


def _valid_snippet(item: object) -> Snippet | None:
    if not isinstance(item, dict):
        return None
    text, url = item.get("text"), item.get("source_url", "")
    if not isinstance(text, str) or not isinstance(url, str):
        return None
    text = " ".join(text.split())
    if not MIN_SNIPPET_WORDS <= len(text.split()) <= MAX_SNIPPET_WORDS:
        return None
    parsed = urlparse(url.strip())
    clean_url = url.strip() if parsed.scheme in ("http", "https") and parsed.netloc else ""
    return Snippet(text=text, source_url=clean_url[:1000])


def normalise(text: str) -> str:
    """The key under which two samples count as duplicates."""
    return " ".join(text.casefold().split())
