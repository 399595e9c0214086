"""Topic trees and corpora through the management commands: import_topics, import_corpus."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from search.models import TextSample, Topic, TopicTree

pytestmark = pytest.mark.django_db

NESTED = {
    "Law": {"Contract law": {"Indemnity clauses": {}, "Lease termination": {}}, "Tax law": {}},
    "Sport": ["Football slang", "Cricket terms"],
}


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def write(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


def corpus_line(topic: str, text: str, url: str = "https://example.org/a") -> str:
    return json.dumps({"topic": topic, "text": text, "source_url": url})


def test_nested_tree_import_prints_a_summary_and_numbers_arms_depth_first(tmp_path):
    path = write(tmp_path, "tree.json", json.dumps(NESTED))

    output = run("import_topics", path, "--name", "Mixed", "--language", "en")

    tree = TopicTree.objects.get(name="Mixed")
    assert output.strip() == f"Imported topic tree 'Mixed' (id {tree.pk}): 8 topics, 5 leaves."
    assert (tree.n_topics, tree.n_leaves, tree.source_file_name) == (8, 5, "tree.json")
    rows = Topic.objects.filter(tree=tree).order_by("position")
    assert [(t.path, t.depth, t.arm) for t in rows] == [
        ("Law", 0, None),
        ("Law > Contract law", 1, None),
        ("Law > Contract law > Indemnity clauses", 2, 0),
        ("Law > Contract law > Lease termination", 2, 1),
        ("Law > Tax law", 1, 2),
        ("Sport", 0, None),
        ("Sport > Football slang", 1, 3),
        ("Sport > Cricket terms", 1, 4),
    ]
    assert rows.get(name="Indemnity clauses").keywords == ["clauses", "indemnity"]


def test_flat_list_import_gives_one_leaf_per_name(tmp_path):
    path = write(tmp_path, "flat.json", json.dumps(["Recipes", "Poetry", "Manuals"]))

    run("import_topics", path, "--name", "Flat", "--description", "three kinds")

    tree = TopicTree.objects.get(name="Flat")
    assert (tree.n_topics, tree.n_leaves, tree.description) == (3, 3, "three kinds")
    assert list(Topic.objects.filter(tree=tree).values_list("arm", "depth")) == [
        (0, 0),
        (1, 0),
        (2, 0),
    ]


@pytest.mark.parametrize("language", ["ja", "zh", "Japanese", "日本語"])
def test_any_language_imports_and_keeps_latin_words_whole(tmp_path, language):
    path = write(tmp_path, "ja.json", json.dumps({"契約法 Contract law": ["賃貸借の解約"]}))

    run("import_topics", path, "--name", "Japanese", "--language", language)

    root = Topic.objects.get(depth=0)
    assert root.tree.language == language
    assert "contract" in root.keywords and "law" in root.keywords


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"Law": {', "not valid JSON (line 1"),
        (b'{"Law": {"": {}}}', "empty topic name at 'Law > '"),
        (b'{"Law": 3}', "children of 'Law' must be an object, a list or empty"),
        (b"[]", "the topic tree is empty"),
        (b"\xff\xfe\x00", "not UTF-8"),
    ],
)
def test_bad_tree_files_are_refused_and_nothing_is_written(tmp_path, content, message):
    path = write(tmp_path, "bad.json", content)

    with pytest.raises(CommandError, match="nothing was written") as raised:
        run("import_topics", path, "--name", "Bad")

    assert message in str(raised.value)
    assert not TopicTree.objects.exists() and not Topic.objects.exists()


def test_a_taken_name_or_a_missing_file_is_a_command_error(tmp_path):
    path = write(tmp_path, "flat.json", json.dumps(["A"]))
    run("import_topics", path, "--name", "Taken")

    with pytest.raises(CommandError, match="already exists"):
        run("import_topics", path, "--name", "Taken")
    with pytest.raises(CommandError, match="longer than 200 characters"):
        run("import_topics", path, "--name", "N" * 201)
    with pytest.raises(CommandError, match="is not a file"):
        run("import_topics", str(tmp_path / "missing.json"), "--name", "Other")
    assert TopicTree.objects.count() == 1


@pytest.fixture
def law_tree(tmp_path) -> TopicTree:
    run("import_topics", write(tmp_path, "tree.json", json.dumps(NESTED)), "--name", "Law")
    return TopicTree.objects.get(name="Law")


def test_corpus_lines_name_a_leaf_by_name_or_full_path_and_duplicates_are_skipped(
    tmp_path, law_tree
):
    lines = [
        corpus_line("Indemnity clauses", "The supplier shall indemnify the client."),
        corpus_line("law > contract law > lease termination", "Two months' notice in writing."),
        # The same text again (extra spaces do not make it new): a duplicate.
        corpus_line("Indemnity clauses", "The supplier  shall indemnify the client. "),
        corpus_line("Football slang", "Top bins!", url=""),
    ]
    path = write(tmp_path, "corpus.jsonl", "\n".join(lines) + "\n\n")

    output = run("import_corpus", path, "--tree", "Law")

    assert output.strip() == "Imported 3 samples into 'Law' from 4 lines (1 duplicates skipped)."
    samples = TextSample.objects.order_by("id")
    url = "https://example.org/a"
    assert [(s.topic.name, s.text, s.source_url, s.origin) for s in samples] == [
        ("Indemnity clauses", "The supplier shall indemnify the client.", url, "corpus"),
        ("Lease termination", "Two months' notice in writing.", url, "corpus"),
        ("Football slang", "Top bins!", "", "corpus"),
    ]
    assert samples[0].origin_detail == {"file": "corpus.jsonl", "line": 1}

    # Importing the same file again adds nothing: every line is a stored duplicate.
    again = run("import_corpus", path, "--tree", "Law")
    assert "Imported 0 samples" in again and "(4 duplicates skipped)" in again
    assert TextSample.objects.count() == 3


def test_bad_corpus_lines_are_all_reported_and_nothing_is_written(tmp_path, law_tree):
    lines = [
        corpus_line("Indemnity clauses", "A good line."),
        corpus_line("Unknown topic", "Its topic is not in the tree."),
        corpus_line("Law", "Law is an inner topic, not a leaf."),
        "not json",
        corpus_line("Tax law", "A bad URL.", url="javascript:alert(1)"),
        json.dumps({"topic": "Tax law"}),
    ]
    path = write(tmp_path, "corpus.jsonl", "\n".join(lines))

    with pytest.raises(CommandError) as raised:
        run("import_corpus", path, "--tree", "Law")

    message = str(raised.value)
    assert "5 bad line(s), nothing imported" in message
    assert "line 2: no leaf topic named 'Unknown topic'" in message
    assert "line 3: no leaf topic named 'Law'" in message
    assert "line 4: not valid JSON" in message
    assert 'line 5: "source_url" must be an http(s) URL or empty' in message
    assert 'line 6: "text" must be a non-empty string' in message
    assert not TextSample.objects.exists()


def test_corpus_into_a_missing_or_unfinished_tree_or_a_non_utf8_file(tmp_path, law_tree):
    good = write(tmp_path, "corpus.jsonl", corpus_line("Tax law", "Text."))
    TopicTree.objects.create(name="Pending", status=TopicTree.Status.GENERATING)

    with pytest.raises(CommandError, match="no topic tree named 'Nope'"):
        run("import_corpus", good, "--tree", "Nope")
    with pytest.raises(CommandError, match="is generating: it has no topics yet"):
        run("import_corpus", good, "--tree", "Pending")
    with pytest.raises(CommandError, match="not UTF-8"):
        run("import_corpus", write(tmp_path, "latin1.jsonl", b"\xe9\xff"), "--tree", "Law")
    with pytest.raises(CommandError, match="has no samples"):
        run("import_corpus", write(tmp_path, "empty.jsonl", "\n\n"), "--tree", "Law")
    assert not TextSample.objects.exists()
