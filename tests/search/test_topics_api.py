"""REST API for topic trees: list, retrieve, create (JSON or file), corpus, generate, topics."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from search.models import TextSample, Topic, TopicTree
from search.topics.services import import_topic_tree
from tests.engines.factories import EngineFactory

pytestmark = pytest.mark.django_db

NESTED = {"Law": {"Contract law": ["Indemnity clauses", "Lease notices"]}, "Sport": ["Cricket"]}


@pytest.fixture
def api(admin_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


@pytest.fixture
def tree(db) -> TopicTree:
    return import_topic_tree(NESTED, name="Law and sport")


def test_annotators_and_anonymous_clients_are_refused(annotator_user, tree):
    client = APIClient()
    assert client.get("/api/topic-trees/").status_code in (401, 403)
    client.force_authenticate(annotator_user)
    responses = [
        client.get("/api/topic-trees/"),
        client.get(f"/api/topic-trees/{tree.pk}/"),
        client.get(f"/api/topic-trees/{tree.pk}/topics/"),
        client.post("/api/topic-trees/", {"name": "X", "tree": ["A"]}, format="json"),
        client.post(f"/api/topic-trees/{tree.pk}/corpus/", {"jsonl": "{}"}, format="json"),
        client.post("/api/topic-trees/generate/", {}, format="json"),
    ]
    assert [r.status_code for r in responses] == [403] * 6
    assert TopicTree.objects.count() == 1


def test_list_and_retrieve(api, tree):
    listed = api.get("/api/topic-trees/").json()
    one = api.get(f"/api/topic-trees/{tree.pk}/").json()

    assert listed["count"] == 1
    assert one == listed["results"][0]
    assert {k: one[k] for k in ("name", "origin", "status", "n_topics", "n_leaves")} == {
        "name": "Law and sport",
        "origin": "import",
        "status": "ready",
        "n_topics": 6,
        "n_leaves": 3,
    }
    assert one["n_samples"] == 0


def test_create_from_a_json_body_or_a_file(api):
    from_json = api.post(
        "/api/topic-trees/",
        {"name": "Body", "language": "de", "tree": NESTED},
        format="json",
    )
    from_flat = api.post("/api/topic-trees/", {"name": "Flat", "tree": ["A", "B"]}, format="json")
    upload = SimpleUploadedFile("t.json", json.dumps(NESTED).encode())
    from_file = api.post("/api/topic-trees/", {"name": "File", "file": upload}, format="multipart")

    assert [r.status_code for r in (from_json, from_flat, from_file)] == [201, 201, 201]
    assert (from_json.json()["language"], from_json.json()["n_topics"]) == ("de", 6)
    assert from_flat.json()["n_leaves"] == 2
    assert from_file.json()["source_file_name"] == "t.json"
    assert TopicTree.objects.get(name="Body").created_by.username == "admin"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "X", "tree": {"Law": {"": {}}}}, "empty topic name at 'Law > '"),
        ({"name": "X", "tree": 5}, "a topic tree is a JSON object of nested topics"),
        ({"name": "X", "tree": []}, "the topic tree is empty"),
        ({"name": "Law and sport", "tree": ["A"]}, "already exists"),
    ],
)
def test_a_bad_tree_is_a_400_with_the_reason_and_nothing_is_written(api, tree, body, message):
    response = api.post("/api/topic-trees/", body, format="json")

    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert TopicTree.objects.count() == 1 and Topic.objects.count() == 6


def test_exactly_one_of_tree_or_file(api):
    neither = api.post("/api/topic-trees/", {"name": "X"}, format="json")
    upload = SimpleUploadedFile("t.json", b'["A"]')
    both = api.post("/api/topic-trees/", {"name": "X", "tree": "[]", "file": upload})

    assert neither.status_code == both.status_code == 400
    assert "exactly one of tree" in json.dumps(neither.json())
    assert not TopicTree.objects.exists()


def test_corpus_as_text_or_upload_with_duplicates_counted(api, tree):
    lines = "\n".join(
        json.dumps({"topic": t, "text": x, "source_url": "https://example.org/x"})
        for t, x in [("Cricket", "A maiden over."), ("Lease notices", "Two months' notice.")]
    )
    as_text = api.post(f"/api/topic-trees/{tree.pk}/corpus/", {"jsonl": lines}, format="json")
    upload = SimpleUploadedFile("c.jsonl", lines.encode())
    as_file = api.post(f"/api/topic-trees/{tree.pk}/corpus/", {"file": upload})

    assert as_text.status_code == 200 and as_text.json() == {
        "lines": 2,
        "created": 2,
        "duplicates": 0,
    }
    assert as_file.json() == {"lines": 2, "created": 0, "duplicates": 2}
    assert api.get(f"/api/topic-trees/{tree.pk}/").json()["n_samples"] == 2


def test_bad_corpus_lines_are_a_400_listing_each_line(api, tree):
    lines = '{"topic": "Cricket", "text": "ok"}\n{"topic": "Nope", "text": "x"}\nnot json'

    response = api.post(f"/api/topic-trees/{tree.pk}/corpus/", {"jsonl": lines}, format="json")

    assert response.status_code == 400
    body = response.json()
    assert body["detail"].startswith("2 bad line(s), nothing imported")
    assert [e["line"] for e in body["errors"]] == [2, 3]
    assert not TextSample.objects.exists()


def test_generate_starts_a_background_job(api, sent_tasks, django_capture_on_commit_callbacks):
    EngineFactory(name="gen")
    body = {"name": "Gen", "engine": "gen", "roots": ["Law"], "depth": 2, "branching": 3}

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/topic-trees/generate/", body, format="json")
    refused = api.post("/api/topic-trees/generate/", body | {"name": "G2", "engine": "x"})
    out_of_range = api.post("/api/topic-trees/generate/", body | {"name": "G3", "depth": 6})

    assert response.status_code == 202
    assert (response.json()["status"], response.json()["generation"]["roots"]) == (
        "generating",
        ["Law"],
    )
    assert [(name, args) for name, args, _ in sent_tasks] == [
        ("search.generate_topic_tree", (response.json()["id"],))
    ]
    assert refused.status_code == 400
    assert refused.json()["detail"] == "there is no engine named 'x'"
    assert out_of_range.status_code == 400 and "depth" in out_of_range.json()
    assert list(TopicTree.objects.values_list("name", flat=True)) == ["Gen"]


def test_topics_search_and_levels(api, tree):
    everything = api.get(f"/api/topic-trees/{tree.pk}/topics/").json()
    matches = api.get(f"/api/topic-trees/{tree.pk}/topics/?q=contract").json()
    roots = api.get(f"/api/topic-trees/{tree.pk}/topics/?parent=root").json()
    law = Topic.objects.get(tree=tree, name="Law")
    below_law = api.get(f"/api/topic-trees/{tree.pk}/topics/?parent={law.pk}").json()
    bad = api.get(f"/api/topic-trees/{tree.pk}/topics/?parent=law")

    assert [t["path"] for t in everything["results"]][:3] == [
        "Law",
        "Law > Contract law",
        "Law > Contract law > Indemnity clauses",
    ]
    assert everything["count"] == 6
    assert [t["name"] for t in matches["results"]] == [
        "Contract law",
        "Indemnity clauses",
        "Lease notices",
    ]
    first = matches["results"][1]
    assert (first["is_leaf"], first["arm"], first["keywords"]) == (
        True,
        0,
        ["clauses", "indemnity"],
    )
    assert [(t["name"], t["n_children"]) for t in roots["results"]] == [("Law", 1), ("Sport", 1)]
    assert [t["name"] for t in below_law["results"]] == ["Contract law"]
    assert bad.status_code == 400


def test_the_schema_documents_the_topic_tree_endpoints(api):
    paths = api.get("/api/schema/?format=json").json()["paths"]

    assert set(paths["/api/topic-trees/"]) >= {"get", "post"}
    assert "post" in paths["/api/topic-trees/generate/"]
    assert "post" in paths["/api/topic-trees/{id}/corpus/"]
    topics = paths["/api/topic-trees/{id}/topics/"]["get"]
    assert {p["name"] for p in topics["parameters"]} >= {"q", "parent", "page"}
