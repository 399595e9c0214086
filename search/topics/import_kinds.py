"""Topic trees and corpora as kinds of background import (ADR 0022): big files from the pages
or the API are imported by a worker with the same services as small ones."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.urls import reverse

import imports
from search.models import TopicTree
from search.topics.services import (
    CorpusImportError,
    CorpusReport,
    TopicTreeError,
    check_tree_name,
    import_corpus,
    import_topic_tree,
)

TREE_KIND = "topic-tree"
CORPUS_KIND = "topic-corpus"


def tree_options(*, name: str, language: str, description: str, file_name: str) -> dict:
    return {"name": name, "language": language, "description": description, "file": file_name}


def corpus_options(tree: TopicTree, file_name: str) -> dict:
    return {"tree_id": tree.pk, "file": file_name}


def corpus_refusals(exc: CorpusImportError) -> list[str]:
    return [f"line {n}: {reason}" if n else reason for n, reason in exc.errors]


def _check_tree(options: Mapping[str, Any]) -> None:
    try:
        check_tree_name(options["name"])
    except TopicTreeError as exc:
        raise imports.ImportRefused([str(exc)]) from None


def _run_tree(lines: Iterable[bytes], options: Mapping[str, Any], created_by, on_written):
    try:
        return import_topic_tree(
            b"".join(lines),  # one JSON document, not lines
            name=options["name"],
            language=options["language"],
            description=options["description"],
            source_file_name=options["file"],
            created_by=created_by,
            on_written=lambda tree: on_written(
                tree, f"{tree.n_topics} topics, {tree.n_leaves} leaves"
            ),
        )
    except TopicTreeError as exc:
        raise imports.ImportRefused([str(exc)]) from None


def _ready_tree(options: Mapping[str, Any]) -> TopicTree:
    tree = TopicTree.objects.filter(pk=options["tree_id"]).first()
    if tree is None:
        raise imports.ImportRefused(["the topic tree was deleted"])
    if tree.status != TopicTree.Status.READY:
        raise imports.ImportRefused([f"{tree.name} is {tree.status}: it has no topics yet"])
    return tree


def _run_corpus(lines: Iterable[bytes], options: Mapping[str, Any], created_by, on_written):
    tree = _ready_tree(options)

    def written(report: CorpusReport) -> None:
        summary = (
            f"{report.created} samples added from {report.lines} lines "
            f"({report.duplicates} duplicates skipped)"
        )
        on_written(tree, summary)

    try:
        import_corpus(tree, b"".join(lines), file_name=options["file"], on_written=written)
    except CorpusImportError as exc:
        raise imports.ImportRefused(corpus_refusals(exc)) from None
    return tree


def _check_corpus(options: Mapping[str, Any]) -> None:
    _ready_tree(options)


def _tree_page(pk: int) -> str:
    return reverse("search:topic_tree", args=[pk])


def register() -> None:
    imports.register(
        imports.ImportKind(TREE_KIND, "Topic tree", _run_tree, _tree_page, check=_check_tree)
    )
    imports.register(
        imports.ImportKind(
            CORPUS_KIND,
            "Corpus samples of a topic tree",
            _run_corpus,
            _tree_page,
            check=_check_corpus,
        )
    )
