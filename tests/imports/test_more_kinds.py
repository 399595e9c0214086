"""Topic trees, corpora and challenge-set JSONL files above the threshold are imported as
background jobs (pages and API) whose results are the synchronous imports'."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from challenge_sets import services
from challenge_sets.import_kinds import JSONL_KIND
from challenge_sets.models import AuditEntry, ChallengeItem
from challenge_sets.sources.jsonl import read_candidates
from imports.models import ImportJob
from search.models import TextSample, TopicTree
from search.topics.import_kinds import CORPUS_KIND, TREE_KIND
from search.topics.services import import_corpus, import_topic_tree
from tests.challenge_sets.conftest import ROWS, curators_group, jsonl, make_set
from tests.factories import UserFactory
from tests.imports.conftest import THRESHOLD

pytestmark = pytest.mark.django_db


def big(content: bytes, name: str) -> SimpleUploadedFile:
    assert len(content) > THRESHOLD
    return SimpleUploadedFile(name, content)


def tree_json(n: int = 60) -> bytes:
    tree = {f"Root {r}": {f"Leaf {r}.{c}": {} for c in range(n)} for r in range(3)}
    return json.dumps(tree).encode()


def topics_of(tree: TopicTree) -> list[tuple]:
    return list(tree.topics.order_by("position").values_list("position", "path", "arm", "depth"))


def corpus(n: int = 80, bad_last: bool = False) -> bytes:
    rows = [{"topic": f"Leaf 0.{i % 5}", "text": f"Sample text number {i} about things."}
            for i in range(n)]  # fmt: skip
    if bad_last:
        rows[-1] = {"topic": "No such leaf", "text": "x"}
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def test_a_big_topic_tree_from_the_page_is_imported_by_a_job(admin_client):
    upload = big(tree_json(), "tree.json")
    response = admin_client.post(
        "/search/topics/import/", {"name": "Big", "language": "en", "file": upload}
    )
    job = ImportJob.objects.get()
    assert response["Location"] == f"/imports/{job.pk}/" and job.kind == TREE_KIND

    call_command("run_import", str(job.pk))

    tree = TopicTree.objects.get(name="Big")
    job.refresh_from_db()
    assert (job.status, job.result_id, job.summary) == ("done", tree.pk, "183 topics, 180 leaves")
    assert topics_of(tree) == topics_of(import_topic_tree(tree_json(), name="Sync"))


def test_a_big_corpus_through_the_api_is_a_job_and_a_bad_last_line_writes_nothing(admin_user):
    tree = import_topic_tree(tree_json(), name="Tree")
    api = APIClient()
    api.force_authenticate(admin_user)
    url = f"/api/topic-trees/{tree.pk}/corpus/"

    bad = api.post(url, {"file": big(corpus(bad_last=True), "bad.jsonl")})
    assert bad.status_code == 202
    with pytest.raises(CommandError):
        call_command("run_import", str(bad.json()["id"]))
    assert api.get(bad["Location"]).json()["errors"] == [
        "line 80: no leaf topic named 'No such leaf' in this tree (name or full path)"
    ]
    assert not TextSample.objects.exists()

    good = api.post(url, {"file": big(corpus(), "good.jsonl")})
    assert (good.status_code, good.json()["kind"]) == (202, CORPUS_KIND)
    call_command("run_import", str(good.json()["id"]))
    body = api.get(good["Location"]).json()
    assert body["summary"] == "80 samples added from 80 lines (0 duplicates skipped)"
    assert body["result_url"] == f"/search/topics/{tree.pk}/"
    samples = list(TextSample.objects.order_by("text").values_list("topic__path", "text"))
    other = import_topic_tree(tree_json(), name="Other")
    import_corpus(other, corpus(), file_name="good.jsonl")
    assert samples == list(
        TextSample.objects.filter(topic__tree=other)
        .order_by("text")
        .values_list("topic__path", "text")
    )


def _items(challenge_set) -> list[tuple]:
    return list(
        ChallengeItem.objects.filter(challenge_set=challenge_set)
        .order_by("id")
        .values_list("origin_ref", "source", "translations", "automatic_difficulty", "provenance")
    )


def many_rows(n: int = 30) -> str:
    return jsonl(*[ROWS[i % 3] | {"id": f"r{i}", "source": f"{ROWS[i % 3]['source']} ({i})"}
                   for i in range(n)])  # fmt: skip


def test_a_big_challenge_set_file_on_the_page_is_a_job_the_curator_follows(client):
    curator = UserFactory(username="curator", is_staff=True)
    curator.groups.add(curators_group())
    curator_client = client
    curator_client.force_login(curator)
    challenge_set = make_set(rows=[])
    upload = big(many_rows().encode(), "many.jsonl")
    response = curator_client.post(
        reverse("challenge_sets:add_from_source", args=[challenge_set.pk, "jsonl"]),
        {"jsonl-file": upload},
    )
    job = ImportJob.objects.get()
    assert response["Location"] == f"/imports/{job.pk}/" and job.kind == JSONL_KIND
    assert job.created_by == curator

    call_command("run_import", str(job.pk))

    job.refresh_from_db()
    assert job.summary == "30 items added (0 already in the set, 27 near-duplicates flagged)"
    assert AuditEntry.objects.filter(challenge_set=challenge_set, user=curator).exists()
    synchronous = make_set(name="Sync", rows=[])
    services.add_items(synchronous, read_candidates(many_rows(), "many.jsonl"))
    assert _items(challenge_set) == _items(synchronous)
    page = curator_client.get(f"/imports/{job.pk}/")
    assert f'href="/challenge-sets/{challenge_set.pk}/"'.encode() in page.content
