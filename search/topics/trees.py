"""Topic trees as plain data: parsing imported or generated trees, and keywords for similarity.

Pure Python (no Django). A tree arrives either nested, ``{"Root": {"Child": {...}}}`` (the shape
of the topic-generation prompt in seed 000 App. D), or as a flat list of names (each a root
topic). Both become a list of :class:`TopicSpec` in depth-first order, parents before children,
so the importer can create rows in one pass.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import regex

# wordfreq is imported where names are tokenized: loaded with the module, it costs every process
# that loads the search app a seventh of a second at start-up.
from formats import strict_json
from search.bandit.contextual import jaccard, shared_keywords

MAX_DEPTH = 12
MAX_NAME_LENGTH = 300

# Function words carry no topical signal; without them "History of Law" and "History of Art"
# would look alike through "of".
STOPWORDS = frozenset(
    "a an and are as at be by for from in into is of on or the to vs versus with without "
    "its their this that these those how what why when which who".split()
)


class TopicTreeError(ValueError):
    """The input is not a usable topic tree; the message says where and why."""


@dataclass(frozen=True)
class TopicSpec:
    name: str
    parent: int | None  # index into the list of specs, parents come first
    depth: int
    keywords: frozenset[str] = field(default_factory=frozenset)


def keywords_of(name: str, lang: str = "en") -> frozenset[str]:
    """Lowercased content words of a topic name, for Jaccard similarity (seed 000 App. B.1)."""
    return frozenset(
        token for token in _tokens(name, lang) if token not in STOPWORDS and len(token) > 1
    )


# Runs of CJK script: only these go to a language's segmenter (jieba cuts Latin words apart).
_CJK_RUN = regex.compile(r"([\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]+)")


def _tokens(name: str, lang: str) -> list[str]:
    from wordfreq import tokenize

    tokens: list[str] = []
    for number, run in enumerate(_CJK_RUN.split(name)):
        tokens += _segment(run, lang) if number % 2 else tokenize(run, "und")
    return [token for token in tokens if token.strip()]


def _segment(text: str, lang: str) -> list[str]:
    from wordfreq import tokenize

    try:
        return tokenize(text, lang)
    except (ImportError, ValueError):
        # A tree's language is free text, and a segmenter (MeCab, jieba) may be missing: an
        # odd tag must not refuse the tree, and wordfreq's language-neutral rules still give
        # usable keywords.
        return tokenize(text, "und")


def parse_tree(data: object, lang: str = "en") -> list[TopicSpec]:
    """Turn a nested dict or a flat list of names into topic specs (depth-first, parents first)."""
    specs: list[TopicSpec] = []
    if isinstance(data, list):
        for position, name in enumerate(data):
            specs.append(_spec(_clean_name(name, f"item {position + 1}"), None, 0, lang))
    elif isinstance(data, dict):
        _walk(data, None, 0, specs, lang, path="")
    else:
        raise TopicTreeError("a topic tree is a JSON object of nested topics or a list of names")
    if not specs:
        raise TopicTreeError("the topic tree is empty")
    _refuse_duplicate_siblings(specs)
    return specs


def _refuse_duplicate_siblings(specs: list[TopicSpec]) -> None:
    """Two siblings with one name would be one topic path; refused, never merged."""
    seen: set[tuple[int | None, str]] = set()
    for spec in specs:
        if (spec.parent, spec.name) in seen:
            parent = specs[spec.parent].name if spec.parent is not None else None
            where = f"under {parent!r}" if parent else "at the top level"
            raise TopicTreeError(f"two sibling topics are named {spec.name!r} {where}")
        seen.add((spec.parent, spec.name))


def _walk(node: dict, parent: int | None, depth: int, specs: list, lang: str, path: str) -> None:
    if depth >= MAX_DEPTH:
        raise TopicTreeError(f"the tree is deeper than {MAX_DEPTH} levels at {path!r}")
    for raw_name, children in node.items():
        where = f"{path} > {raw_name}" if path else str(raw_name)
        name = _clean_name(raw_name, where)
        specs.append(_spec(name, parent, depth, lang))
        index = len(specs) - 1
        if isinstance(children, dict):
            _walk(children, index, depth + 1, specs, lang, where)
        elif isinstance(children, list):
            for position, child in enumerate(children):
                child_name = _clean_name(child, f"{where} > item {position + 1}")
                specs.append(_spec(child_name, index, depth + 1, lang))
        elif children not in (None, "", {}):
            raise TopicTreeError(f"children of {where!r} must be an object, a list or empty")


def _spec(name: str, parent: int | None, depth: int, lang: str) -> TopicSpec:
    return TopicSpec(name=name, parent=parent, depth=depth, keywords=keywords_of(name, lang))


def _clean_name(raw: object, where: str) -> str:
    if not isinstance(raw, str):
        raise TopicTreeError(f"topic name at {where!r} must be text, got {type(raw).__name__}")
    name = " ".join(raw.split())
    if not name:
        raise TopicTreeError(f"empty topic name at {where!r}")
    if len(name) > MAX_NAME_LENGTH:
        raise TopicTreeError(f"topic name at {where!r} is longer than {MAX_NAME_LENGTH} characters")
    return name


_CODE_BLOCK = re.compile(r"```(?:json|python)?\s*(.*?)```", re.DOTALL)


def parse_generated_tree(text: str, lang: str = "en") -> list[TopicSpec]:
    """Parse an LLM's answer to the topic-generation prompt: a nested dict, maybe in a code block.

    Model output is untrusted: only JSON or Python *literals* are accepted (``ast.literal_eval``
    evaluates no code), and the result goes through the same validation as an import.
    """
    match = _CODE_BLOCK.search(text)
    body = (match.group(1) if match else text).strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise TopicTreeError("the model's answer contains no nested topic dictionary")
    body = body[start : end + 1]
    try:
        data = strict_json.loads(body)
    except strict_json.JSONSyntaxError:
        try:
            data = ast.literal_eval(body)
        except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
            raise TopicTreeError(f"the model's topic tree is not valid JSON: {exc}") from None
    except strict_json.JSONInputError as exc:
        raise TopicTreeError(f"the model's topic tree is not valid JSON: {exc}") from None
    return parse_tree(data, lang)


def neighbour_lists(
    keywords: list[frozenset[str]], max_neighbours: int = 20
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Neighbours by keyword Jaccard similarity, as CSR arrays (indptr, indices, similarities).

    Candidates are the topics that share a keyword with a topic
    (:func:`search.bandit.contextual.shared_keywords`); a keyword shared by very many topics adds
    little information and is skipped to bound the cost.
    """
    limit = max(50, int(len(keywords) ** 0.5) * 4)
    indptr = [0]
    indices: list[int] = []
    sims: list[float] = []
    for index, candidates in enumerate(shared_keywords(keywords, limit)):
        words = keywords[index]
        scored = sorted(
            ((jaccard(words, keywords[other]), other) for other in candidates),
            reverse=True,
        )[:max_neighbours]
        for similarity, other in scored:
            if similarity > 0:
                indices.append(other)
                sims.append(similarity)
        indptr.append(len(indices))
    return (
        np.asarray(indptr, dtype=np.int64),
        np.asarray(indices, dtype=np.int64),
        np.asarray(sims, dtype=np.float64),
    )


def flatten_names(specs: Iterable[TopicSpec]) -> list[str]:
    return [spec.name for spec in specs]
