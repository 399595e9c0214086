"""Seeds for breaker runs: a search run's top-k, a topic tree, a difficulty dataset, a JSONL
upload; sampled reproducibly with the stored seed."""

from __future__ import annotations

import json

import pytest

from difficulty import services as difficulty_services
from search.breaker.seeds import SeedError, load_seeds
from search.breaker.services import start_breaker_run
from search.runs.services import run_in_foreground, start_search_run
from tests.engines.factories import HeuristicEngineFactory
from tests.search.breaker_helpers import jsonl_seeds, offline_config
from tests.search.conftest import make_corpus_tree

pytestmark = pytest.mark.django_db


def test_jsonl_seeds_keep_url_and_doc_id_and_sample_with_the_stored_seed():
    seeds = load_seeds(jsonl_seeds())
    assert seeds[0].ref == {
        "origin": "jsonl", "file": "seeds.jsonl", "line": 1,
        "source_url": "https://example.org/0", "doc_id": "d0",
    }  # fmt: skip
    first = load_seeds(jsonl_seeds(n=3, sample_seed=7))
    assert [s.text for s in first] == [s.text for s in load_seeds(jsonl_seeds(n=3, sample_seed=7))]
    assert len(first) == 3
    assert {s.text for s in first} != {s.text for s in load_seeds(jsonl_seeds(n=3, sample_seed=8))}


def test_bad_jsonl_lines_are_all_reported():
    lines = '{"text": "ok"}\nnot json\n{"source_url": "x"}\n'
    with pytest.raises(SeedError) as caught:
        load_seeds({"from": "jsonl", "lines": lines})
    assert str(caught.value) == (
        'line 2: not valid JSON (Expecting value at column 1); line 3: needs a non-empty "text"'
    )


def test_topic_tree_seeds_carry_their_topic_and_url():
    tree = make_corpus_tree(n_topics=2, per_topic=3)
    seeds = load_seeds({"from": "topic_tree", "tree": tree.name})
    assert len(seeds) == 6 and seeds[0].ref["topic"] == "Topic 0"
    assert seeds[0].ref["source_url"] == "https://example.org/0/0"


def test_search_run_seeds_are_the_texts_of_its_top_k_topics():
    tree = make_corpus_tree(n_topics=4, per_topic=3)
    HeuristicEngineFactory(name="rarity", params={"feature": "chars"})
    run = start_search_run(
        {"name": "s", "tree": tree.name, "sampler": "corpus", "difficulty_engine": "rarity",
         "budget_pulls": 12, "k": 1, "batch_size": 4}, enqueue=False,
    )  # fmt: skip
    run = run_in_foreground(run.pk)
    seeds = load_seeds({"from": "search_run", "run": run.pk, "top_k": 1})
    assert seeds and {s.ref["topic"] for s in seeds} == {seeds[0].ref["topic"]}
    assert all(s.ref["run"] == run.pk and s.ref["origin"] == "search_run" for s in seeds)


def test_dataset_seeds_are_its_distinct_sources():
    lines = [
        json.dumps({"langs": "en-de", "line_id": i, "src": f"Source sentence {i % 3}.",
                    "doc_id": f"doc{i}", "scores": {"a": 80.0}})
        for i in range(6)
    ]  # fmt: skip
    dataset = difficulty_services.import_difficulty_dataset(lines, name="ds")
    seeds = load_seeds({"from": "dataset", "dataset": "ds"})
    assert [s.text for s in seeds] == [f"Source sentence {i}." for i in range(3)]
    assert seeds[0].ref["dataset"] == dataset.pk


def test_a_run_stores_how_its_seeds_were_sampled_and_refuses_unknown_sources():
    run = start_breaker_run(offline_config(seeds=jsonl_seeds(n=2, sample_seed=4)), enqueue=False)
    assert run.seeds_from == {"from": "jsonl", "file": "seeds.jsonl", "n": 2, "sample_seed": 4,
                              "lines_stored_on_chains": True}  # fmt: skip
    assert run.chains.count() == 2
    with pytest.raises(SeedError, match="seeds need"):
        load_seeds({"from": "web"})
