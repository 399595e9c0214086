"""Offline demo data of the search app (called by ``manage.py load_demo``; idempotent)."""

from __future__ import annotations

from pathlib import Path

from search.breaker.demo import load_breaker_demo
from search.models import TopicTree
from search.runs.demo import load_run_demo
from search.topics.services import import_corpus, import_topic_tree

# --- Topic trees and samples (seed 000) ------------------------------------------------------

TOPIC_DEMO_NAME = "Demo topics"
EXAMPLES = Path(__file__).resolve().parent / "examples"


def load_topic_demo(stdout) -> None:
    """Import the authored demo tree and its corpus once; a second call changes nothing."""

    if TopicTree.objects.filter(name=TOPIC_DEMO_NAME).exists():
        return
    tree = import_topic_tree(
        (EXAMPLES / "demo_topics.json").read_bytes(),
        name=TOPIC_DEMO_NAME,
        description=(
            "A small hand-written tree of text kinds that are plausibly hard or easy for MT "
            "(legal idioms, sports slang, recipes, leaflets, poetry, manuals), with four "
            "original example snippets per leaf. Source URLs are examples, not real pages."
        ),
        source_file_name="demo_topics.json",
    )
    report = import_corpus(
        tree, (EXAMPLES / "demo_corpus.jsonl").read_bytes(), file_name="demo_corpus.jsonl"
    )
    stdout.write(
        f"search: topic tree {tree.name!r} with {tree.n_leaves} leaves and {report.created} samples"
    )


def load_demo(stdout) -> None:
    load_topic_demo(stdout)
    load_run_demo(stdout)
    load_breaker_demo(stdout, tree_name=TOPIC_DEMO_NAME)
