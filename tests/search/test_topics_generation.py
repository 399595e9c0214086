"""Generating a topic tree with a chat engine: the job end to end through a local OpenAI-compatible
server, untrusted answers, failures, redelivery, validation, and the page queueing it on commit."""

from __future__ import annotations

import json
import re

import pytest
from celery.exceptions import Retry

from engines.selectors import cost_by_scope
from search import tasks
from search.models import Topic, TopicTree
from search.topics import generation as topic_generation
from search.topics.generation import (
    generate_topic_tree,
    retry_tree_generation,
    start_tree_generation,
)
from search.topics.prompts import TOPIC_TREE_PROMPT_VERSION
from search.topics.trees import TopicTreeError
from tests.engines.conftest import fake_openai  # noqa: F401  (fixture)
from tests.engines.factories import EngineFactory, HeuristicEngineFactory
from tests.engines.fake_openai import FakeOpenAI, Reply
from tests.rounds.database_outage import end_this_connection, postgres_only, reconnect

pytestmark = pytest.mark.django_db

_ROOT = re.compile(r"for the domain '([^']+)'")

SUBTREES = {
    "Law": {"Contract law": {"Indemnity clauses": {}, "Lease notices": {}}, "Tax law": {}},
    "Cooking": {"Baking bread": {}, "Stews of the Alps": {}},
}


def obedient(body: dict) -> Reply:
    """Answers like a well-behaved model: the root is the only top-level key."""
    root = _ROOT.search(body["messages"][-1]["content"]).group(1)
    return Reply(json.dumps({root: SUBTREES[root]}))


def tree_rows(tree: TopicTree) -> list[tuple[str, int, int | None]]:
    return list(
        Topic.objects.filter(tree=tree).order_by("position").values_list("path", "depth", "arm")
    )


def start(name: str = "Generated", engine: str = "gen", **overrides) -> TopicTree:
    arguments = {"roots": ["Law", "Cooking"], "depth": 2, "branching": 2, "language": "en"}
    arguments |= overrides
    return start_tree_generation(name, engine, enqueue=False, **arguments)


def test_generation_end_to_end_one_concurrent_call_per_root():
    with FakeOpenAI(obedient, latency=0.3) as server:
        EngineFactory(name="gen", base_url=server.base_url)
        tree = start()
        assert (tree.status, tree.origin) == ("generating", "generated")
        assert tree.generation == {
            "engine": "gen",
            "roots": ["Law", "Cooking"],
            "depth": 2,
            "branching": 2,
            "prompt_version": TOPIC_TREE_PROMPT_VERSION,
        }

        tasks.generate_topic_tree.run(tree.pk)  # the Celery task's body, run in the test

        assert server.max_in_flight == 2  # the roots went concurrently
        prompts = sorted(request.prompt for request in server.requests)
    tree.refresh_from_db()
    assert (tree.status, tree.error, tree.n_topics, tree.n_leaves) == ("ready", "", 8, 5)
    assert tree_rows(tree) == [
        ("Law", 0, None),
        ("Law > Contract law", 1, None),
        ("Law > Contract law > Indemnity clauses", 2, 0),
        ("Law > Contract law > Lease notices", 2, 1),
        ("Law > Tax law", 1, 2),
        ("Cooking", 0, None),
        ("Cooking > Baking bread", 1, 3),
        ("Cooking > Stews of the Alps", 1, 4),
    ]
    assert len(prompts) == 2
    assert all(p.startswith(f"[{TOPIC_TREE_PROMPT_VERSION}]") for p in prompts)
    assert "'Cooking'" in prompts[0] and "exactly 2 distinct children" in prompts[0]
    assert Topic.objects.get(tree=tree, name="Stews of the Alps").keywords == ["alps", "stews"]
    assert cost_by_scope(f"topic_tree:{tree.pk}")["calls"] == 2


def test_a_redelivered_job_leaves_a_ready_tree_alone(fake_openai):  # noqa: F811
    fake_openai.responder = obedient
    EngineFactory(name="gen", base_url=fake_openai.base_url)
    tree = generate_topic_tree(start().pk)
    ids = list(Topic.objects.filter(tree=tree).values_list("id", flat=True))
    calls = len(fake_openai.requests)

    again = generate_topic_tree(tree.pk)

    assert again.status == "ready"
    assert list(Topic.objects.filter(tree=tree).values_list("id", flat=True)) == ids
    assert len(fake_openai.requests) == calls


def test_answers_in_a_code_block_without_the_root_go_below_the_root(fake_openai):  # noqa: F811
    answer = "Here you go:\n```python\n{'Pastry': {'Choux': {}}, 'Pickling': {}}\n```"
    fake_openai.push(Reply(answer))
    EngineFactory(name="gen", base_url=fake_openai.base_url)

    tree = generate_topic_tree(start(roots=["Cooking"]).pk)

    assert tree.status == "ready"
    assert tree_rows(tree) == [
        ("Cooking", 0, None),
        ("Cooking > Pastry", 1, None),
        ("Cooking > Pastry > Choux", 2, 0),
        ("Cooking > Pickling", 1, 1),
    ]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("I am sorry, I cannot help with that.", "contains no nested topic dictionary"),
        ("{'Law': __import__('os').system('echo pwned')}", "not valid JSON"),
        ('{"Law": {}}', "has no subtopics"),
        ('{"Law": {"Contract law": 7}}', "must be an object, a list or empty"),
    ],
)
def test_garbage_answers_fail_the_tree_with_a_readable_error(fake_openai, answer, reason):  # noqa: F811
    fake_openai.push(Reply(answer))
    EngineFactory(name="gen", base_url=fake_openai.base_url)

    tree = generate_topic_tree(start(roots=["Law"]).pk)

    assert tree.status == "failed"
    assert tree.error.startswith("the answer for 'Law'") or "'Law'" in tree.error
    assert reason in tree.error
    assert (tree.n_topics, Topic.objects.filter(tree=tree).count()) == (0, 0)


def test_one_bad_root_fails_the_whole_tree_and_nothing_is_saved(fake_openai):  # noqa: F811
    def half_good(body: dict) -> Reply:
        root = _ROOT.search(body["messages"][-1]["content"]).group(1)
        return Reply("no idea") if root == "Cooking" else obedient(body)

    fake_openai.responder = half_good
    EngineFactory(name="gen", base_url=fake_openai.base_url)

    tree = generate_topic_tree(start().pk)

    assert tree.status == "failed" and "'Cooking'" in tree.error
    assert not Topic.objects.filter(tree=tree).exists()


def test_an_engine_error_fails_the_tree_and_retry_uses_the_cache(fake_openai):  # noqa: F811
    fake_openai.push(Reply.error(401, "invalid api key"))
    fake_openai.responder = obedient
    EngineFactory(name="gen", base_url=fake_openai.base_url)
    tree = start(roots=["Law"])

    failed = generate_topic_tree(tree.pk)

    assert failed.status == "failed"
    assert "401" in failed.error or "invalid api key" in failed.error
    assert retry_tree_generation(failed, enqueue=False)
    assert not retry_tree_generation(failed, enqueue=False)  # already generating again
    assert generate_topic_tree(tree.pk).status == "ready"
    assert TopicTree.objects.get(pk=tree.pk).n_leaves == 3


def test_an_unexpected_error_in_the_task_still_ends_the_tree(monkeypatch, fake_openai, caplog):  # noqa: F811
    EngineFactory(name="gen", base_url=fake_openai.base_url)
    tree = start()

    def broken(tree):
        raise RuntimeError("disk full")

    monkeypatch.setattr(topic_generation, "_generate_specs", broken)
    # The round kernel records the error and logs its traceback for the worker log (it no
    # longer re-raises it: every kind of job ends an unexpected error the same way).
    tasks.generate_topic_tree.run(tree.pk)

    tree.refresh_from_db()
    assert (tree.status, tree.error) == ("failed", "unexpected error: disk full")
    assert "RuntimeError: disk full" in caplog.text  # the traceback


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_lost_database_is_waited_out_and_the_retry_reuses_the_answers(monkeypatch, fake_openai):  # noqa: F811
    fake_openai.responder = obedient
    EngineFactory(name="gen", base_url=fake_openai.base_url)
    tree = start()
    save = topic_generation.save_generated_tree

    def cut_before_saving(locked, specs):
        end_this_connection()  # as a server restart between the answers and the save
        return save(locked, specs)

    monkeypatch.setattr(topic_generation, "save_generated_tree", cut_before_saving)
    with pytest.raises(Retry):
        tasks.generate_topic_tree.run(tree.pk)

    reconnect()
    tree.refresh_from_db()
    assert (tree.status, tree.error) == ("generating", "")  # not failed: the retry will run it
    calls = len(fake_openai.requests)
    monkeypatch.setattr(topic_generation, "save_generated_tree", save)
    tasks.generate_topic_tree.run(tree.pk)  # the retry
    tree.refresh_from_db()
    assert (tree.status, tree.n_leaves) == ("ready", 5)
    assert len(fake_openai.requests) == calls == 2  # both answers came from the engine cache


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"engine": "nope"}, "there is no engine named 'nope'"),
        ({"engine": "off"}, "engine off is disabled"),
        ({"engine": "length"}, "is not configured as a chat model"),
        ({"depth": 0}, "depth must be a whole number from 1 to 5"),
        ({"depth": 6}, "depth must be a whole number from 1 to 5"),
        ({"branching": 1}, "branching factor must be a whole number from 2 to 20"),
        ({"branching": 21}, "branching factor must be a whole number from 2 to 20"),
        ({"roots": [" ", ""]}, "give at least one root domain"),
        ({"roots": ["Law", "law "]}, "root 'law' is listed twice"),
        ({"name": "Taken"}, "a topic tree named 'Taken' already exists"),
        ({"name": "  "}, "the tree needs a name"),
        ({"name": "x" * 201}, "the tree name is longer than 200 characters"),
    ],
)
def test_bad_requests_are_refused_and_nothing_is_written(overrides, message):
    EngineFactory(name="gen")
    EngineFactory(name="off", enabled=False)
    HeuristicEngineFactory(name="length")
    TopicTree.objects.create(name="Taken")

    with pytest.raises(TopicTreeError, match=re.escape(message)):
        start(**overrides)

    assert list(TopicTree.objects.values_list("name", flat=True)) == ["Taken"]


def test_the_generate_page_queues_the_job_on_commit(
    admin_client, sent_tasks, django_capture_on_commit_callbacks
):
    EngineFactory(name="gen")
    form = {
        "name": "From the page",
        "engine": "gen",
        "roots": "Law\r\n\r\n  Cooking  \r\n",
        "depth": "2",
        "branching": "3",
        "language": "en",
    }

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = admin_client.post("/search/topics/generate/", form)
        assert sent_tasks == []  # nothing is queued before the transaction commits

    tree = TopicTree.objects.get(name="From the page")
    assert response.status_code == 302 and response["Location"] == f"/search/topics/{tree.pk}/"
    assert tree.generation["roots"] == ["Law", "Cooking"]
    assert tree.created_by.username == "admin"
    for callback in callbacks:
        callback()
    assert sent_tasks == [
        ("search.generate_topic_tree", (tree.pk,), {"queue": "slow", "countdown": None})
    ]


def test_the_generate_page_shows_why_a_request_is_refused(admin_client):
    EngineFactory(name="gen")
    HeuristicEngineFactory(name="length")
    form = {"name": "X", "engine": "gen", "roots": "A\nA", "depth": "2", "branching": "3"}

    refused = admin_client.post("/search/topics/generate/", form | {"language": "en"})
    out_of_range = admin_client.post("/search/topics/generate/", form | {"depth": "9"})
    not_chat = admin_client.post("/search/topics/generate/", form | {"engine": "length"})

    assert refused.status_code == 400 and b"root &#x27;A&#x27; is listed twice" in refused.content
    assert out_of_range.status_code == 400
    assert b"less than or equal to 5" in out_of_range.content
    assert not_chat.status_code == 400
    assert b"Select a valid choice" in not_chat.content
    assert not TopicTree.objects.exists()


def test_the_foreground_command_generates_or_reports_the_failure(fake_openai):  # noqa: F811
    from io import StringIO

    from django.core.management import CommandError, call_command

    fake_openai.responder = obedient
    EngineFactory(name="gen", base_url=fake_openai.base_url)
    out = StringIO()

    call_command(
        "generate_topic_tree", "--name", "CLI", "--engine", "gen", "--root", "Cooking",
        "--depth", "1", "--branching", "2", stdout=out,
    )  # fmt: skip
    fake_openai.push(Reply("nonsense"))
    with pytest.raises(CommandError, match="failed: the answer for 'Law'"):
        call_command(
            "generate_topic_tree", "--name", "CLI 2", "--engine", "gen", "--root", "Law",
            stdout=StringIO(),
        )  # fmt: skip

    tree = TopicTree.objects.get(name="CLI")
    assert out.getvalue().strip() == (
        f"Generated topic tree 'CLI' (id {tree.pk}): 3 topics, 2 leaves."
    )
