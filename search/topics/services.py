"""Write use-cases for topic trees and text samples (seed 000 §2, App. B–D).

* :func:`import_topic_tree`: nested JSON or a flat list of names → a tree, all or nothing.
* :func:`save_generated_tree`: a chat engine's answer → the topics of a generated tree.
* :func:`import_corpus`: JSONL ``{"topic", "text", "source_url"}`` → samples of a tree's leaves.
* :func:`add_samples`: store drawn snippets, deduplicated per topic (used by the LLM sampler).

A leaf's ``arm`` is its index in a run's bandit arrays, numbered in depth-first order, so the
same tree always maps to the same arms.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any

from django.db import transaction

from formats import strict_json
from formats.jsonl import LineProblem, read_jsonl
from search.models import TextSample, Topic, TopicTree
from search.topics.prompts import MAX_SNIPPET_WORDS, MIN_SNIPPET_WORDS, Snippet, normalise
from search.topics.trees import TopicSpec, TopicTreeError, parse_tree

__all__ = [
    "CorpusImportError",
    "CorpusReport",
    "TopicTreeError",
    "add_samples",
    "check_tree_name",
    "import_corpus",
    "import_topic_tree",
    "save_generated_tree",
    "text_key",
]

_BATCH = 5000


class CorpusImportError(ValueError):
    """A corpus file with bad lines; ``errors`` lists (line number, reason)."""

    def __init__(self, errors: list[tuple[int, str]]) -> None:
        self.errors = errors
        shown = "; ".join(f"line {n}: {reason}" for n, reason in errors[:10])
        more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
        super().__init__(f"{len(errors)} bad line(s), nothing imported: {shown}{more}")


def text_key(text: str) -> str:
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def _read_text(source: Any, error: Callable[[str], Exception]) -> Any:
    """The text of a file, bytes or str (UTF-8, BOM tolerated); other values pass through."""
    if hasattr(source, "read"):
        source = source.read()
    if isinstance(source, bytes):
        try:
            return source.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise error("the file is not UTF-8 text") from None
    return source


def _read_json(source: str | bytes | IO | Any) -> Any:
    source = _read_text(source, TopicTreeError)
    if not isinstance(source, str):
        return source  # already parsed (the API passes JSON bodies through)
    try:
        return strict_json.loads(source)
    except strict_json.JSONSyntaxError as exc:
        raise TopicTreeError(
            f"not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from None
    except strict_json.JSONInputError as exc:
        raise TopicTreeError(f"not valid JSON: {exc}") from None


def import_topic_tree(
    source: str | bytes | IO | dict | list,
    *,
    name: str,
    language: str = "en",
    description: str = "",
    source_file_name: str = "",
    created_by=None,
    on_written: Callable[[TopicTree], None] | None = None,
) -> TopicTree:
    """Create a tree from nested JSON (``{"Root": {"Child": {...}}}``) or a flat list of names.

    Raises :class:`TopicTreeError` with a precise reason; nothing is written then.
    ``on_written(tree)`` runs inside the writing transaction (a background import marks its
    job done there).
    """
    name = check_tree_name(name)
    specs = parse_tree(_read_json(source), language)
    with transaction.atomic():
        tree = TopicTree.objects.create(
            name=name,
            language=language,
            description=description,
            source_file_name=source_file_name[:255],
            created_by=created_by,
        )
        _write_topics(tree, specs)
        if on_written is not None:
            on_written(tree)
    return tree


def check_tree_name(name: str) -> str:
    """The stripped name, or :class:`TopicTreeError` when it is empty, long or taken."""
    name = name.strip()
    if not name:
        raise TopicTreeError("the tree needs a name")
    limit = TopicTree._meta.get_field("name").max_length
    assert limit is not None  # a CharField always has one
    if len(name) > limit:
        raise TopicTreeError(f"the tree name is longer than {limit} characters")
    if TopicTree.objects.filter(name=name).exists():
        raise TopicTreeError(f"a topic tree named {name!r} already exists")
    return name


def save_generated_tree(tree: TopicTree, specs: Sequence[TopicSpec]) -> TopicTree:
    """Replace a generated tree's topics with ``specs`` and mark it ready, atomically."""
    with transaction.atomic():
        tree.topics.all().delete()
        _write_topics(tree, specs)
        tree.status = TopicTree.Status.READY
        tree.error = ""
        tree.save(update_fields=["status", "error", "n_topics", "n_leaves", "updated_at"])
    return tree


def _write_topics(tree: TopicTree, specs: Sequence[TopicSpec]) -> None:
    """Insert topics level by level in batches, so every parent's id is known before its
    children are built. Leaves get arms in depth-first order (the order of ``specs``)."""
    has_child = {spec.parent for spec in specs if spec.parent is not None}
    paths: list[str] = []
    arms: list[int | None] = []
    for position, spec in enumerate(specs):
        parent_path = paths[spec.parent] if spec.parent is not None else ""
        paths.append(f"{parent_path} > {spec.name}" if parent_path else spec.name)
        arms.append(None if position in has_child else 0)
    arm = 0
    for position in range(len(specs)):
        if arms[position] is not None:
            arms[position], arm = arm, arm + 1
    ids: dict[int, int] = {}
    by_depth: dict[int, list[int]] = {}
    for position, spec in enumerate(specs):
        by_depth.setdefault(spec.depth, []).append(position)
    for depth in sorted(by_depth):
        level = by_depth[depth]
        for start in range(0, len(level), _BATCH):
            chunk = level[start : start + _BATCH]
            rows = [_topic_row(tree, specs[p], p, paths[p], arms[p], ids) for p in chunk]
            created = Topic.objects.bulk_create(rows)
            ids.update((p, topic.pk) for p, topic in zip(chunk, created, strict=True))
    tree.n_topics = len(specs)
    tree.n_leaves = arm
    tree.save(update_fields=["n_topics", "n_leaves", "updated_at"])


def _topic_row(tree, spec: TopicSpec, position: int, path: str, arm, ids: dict) -> Topic:
    return Topic(
        tree=tree,
        parent_id=ids[spec.parent] if spec.parent is not None else None,
        position=position,
        arm=arm,
        name=spec.name,
        path=path,
        depth=spec.depth,
        keywords=sorted(spec.keywords),
    )


# --- Samples ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusReport:
    lines: int
    created: int
    duplicates: int


def _corpus_lines(source: str | bytes | IO | Iterable) -> Iterable[tuple[int, Any]]:
    source = _read_text(source, lambda message: CorpusImportError([(0, message)]))
    return read_jsonl(source)


def _parse_corpus_line(data: Any, topics: dict[str, Topic]) -> tuple[Topic, str, str]:
    if isinstance(data, LineProblem):
        raise ValueError(data.reason)
    if not isinstance(data, dict):
        raise ValueError("each line must be a JSON object")
    topic_name, text, url = data.get("topic"), data.get("text"), data.get("source_url", "")
    if not isinstance(topic_name, str) or not topic_name.strip():
        raise ValueError('"topic" must be a non-empty string')
    if not isinstance(text, str) or not text.strip():
        raise ValueError('"text" must be a non-empty string')
    if not isinstance(url, str) or (url and not url.startswith(("http://", "https://"))):
        raise ValueError('"source_url" must be an http(s) URL or empty')
    topic = topics.get(" ".join(topic_name.split()).casefold())
    if topic is None:
        raise ValueError(f"no leaf topic named {topic_name!r} in this tree (name or full path)")
    return topic, " ".join(text.split()), url[:1000]


def import_corpus(
    tree: TopicTree,
    source: str | bytes | IO | Iterable,
    *,
    file_name: str = "",
    on_written: Callable[[CorpusReport], None] | None = None,
) -> CorpusReport:
    """Add samples to the leaves of ``tree``; a topic is named by its name or its full path.

    Atomic: any bad line raises :class:`CorpusImportError` listing every bad line; duplicates
    (within the file or of stored samples of the same topic) are skipped and counted.
    ``on_written(report)`` runs inside the writing transaction.
    """
    leaves = Topic.objects.filter(tree=tree, arm__isnull=False)
    topics: dict[str, Topic] = {}
    for topic in leaves:
        topics.setdefault(topic.name.casefold(), topic)
        topics[topic.path.casefold()] = topic
    errors: list[tuple[int, str]] = []
    rows: dict[tuple[int, str], TextSample] = {}
    lines = 0
    for number, line in _corpus_lines(source):
        lines += 1
        try:
            topic, text, url = _parse_corpus_line(line, topics)
        except ValueError as exc:
            errors.append((number, str(exc)))
            continue
        key = text_key(text)
        rows.setdefault(
            (topic.pk, key),
            TextSample(
                topic=topic,
                text=text,
                text_key=key,
                source_url=url,
                origin=TextSample.Origin.CORPUS,
                origin_detail={"file": file_name, "line": number},
            ),
        )
    if errors:
        raise CorpusImportError(errors)
    if not lines:
        raise CorpusImportError([(0, "the file has no samples")])
    with transaction.atomic():
        existing = set(
            TextSample.objects.filter(topic__tree=tree).values_list("topic_id", "text_key")
        )
        fresh = [row for key, row in rows.items() if key not in existing]
        TextSample.objects.bulk_create(fresh, batch_size=_BATCH)
        report = CorpusReport(lines=lines, created=len(fresh), duplicates=lines - len(fresh))
        if on_written is not None:
            on_written(report)
    return report


def add_samples(topic: Topic, snippets: Sequence[Snippet], detail: dict[str, Any]) -> int:
    """Store snippets drawn for ``topic`` (length-checked, deduplicated); returns how many."""
    rows = [
        TextSample(
            topic=topic,
            text=snippet.text,
            text_key=text_key(snippet.text),
            source_url=snippet.source_url,
            origin=TextSample.Origin.LLM,
            origin_detail=detail,
        )
        for snippet in snippets
        if MIN_SNIPPET_WORDS <= len(snippet.text.split()) <= MAX_SNIPPET_WORDS
    ]
    before = TextSample.objects.filter(topic=topic).count()
    TextSample.objects.bulk_create(rows, ignore_conflicts=True)
    return TextSample.objects.filter(topic=topic).count() - before
