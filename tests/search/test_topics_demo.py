"""The authored demo tree and corpus, and the idempotent demo loader."""

from __future__ import annotations

import json
from io import StringIO

import pytest

from search.demo import EXAMPLES, TOPIC_DEMO_NAME, load_topic_demo
from search.models import TextSample, Topic, TopicTree

pytestmark = pytest.mark.django_db


def test_the_demo_files_have_three_roots_and_four_short_snippets_per_leaf():
    tree = json.loads((EXAMPLES / "demo_topics.json").read_text(encoding="utf-8"))
    lines = [
        json.loads(line)
        for line in (EXAMPLES / "demo_corpus.jsonl").read_text(encoding="utf-8").splitlines()
    ]

    assert len(tree) == 3
    assert all(20 <= len(line["text"].replace(" / ", " ").split()) <= 40 for line in lines)
    assert all(line["source_url"].startswith("https://example.") for line in lines)
    assert len({line["text"] for line in lines}) == len(lines)


def test_the_demo_loader_imports_once_and_changes_nothing_the_second_time():
    out = StringIO()

    load_topic_demo(out)
    first = (
        list(Topic.objects.values_list("id", "path")),
        list(TextSample.objects.values_list("id", "text")),
    )
    load_topic_demo(out)

    tree = TopicTree.objects.get(name=TOPIC_DEMO_NAME)
    assert (tree.n_topics, tree.n_leaves) == (26, 15)
    assert Topic.objects.filter(tree=tree, depth=0).count() == 3
    per_leaf = {
        topic.pk: topic.samples.count()
        for topic in Topic.objects.filter(tree=tree, arm__isnull=False)
    }
    assert set(per_leaf.values()) == {4}
    assert out.getvalue() == (
        f"search: topic tree {TOPIC_DEMO_NAME!r} with 15 leaves and 60 samples"
    )
    assert (
        list(Topic.objects.values_list("id", "path")),
        list(TextSample.objects.values_list("id", "text")),
    ) == first
