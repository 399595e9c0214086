"""REST API of mining jobs: start, list, detail with concepts, cancel; staff only; hostile
bodies are 400s naming the field, and nothing is written."""

from __future__ import annotations

import pytest

from lexical.mining.services import run_in_foreground, start_mining
from lexical.models import MiningJob
from tests.lexical.mining_support import synthetic_corpus, tiny_corpus

pytestmark = pytest.mark.django_db
URL = "/api/lexical-mining-jobs/"


def test_start_list_and_cancel(admin_client, sent_tasks, django_capture_on_commit_callbacks):
    corpus = tiny_corpus()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            URL, {"corpus": corpus.pk, "params": {"min_variation_count": 5}},
            content_type="application/json",
        )  # fmt: skip
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "queued" and body["params"]["min_variation_count"] == 5
    assert body["concepts"] == [] and body["links"]["page"].endswith(
        f"/lexical/mining/{body['id']}/"
    )
    assert len(sent_tasks) == 1
    listing = admin_client.get(URL).json()
    assert [row["id"] for row in listing["results"]] == [body["id"]]
    cancelled = admin_client.post(f"{URL}{body['id']}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert admin_client.post(f"{URL}{body['id']}/cancel/").status_code == 409


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"corpus": "1"}, "corpus"),
        ({"corpus": True}, "corpus"),
        ({"corpus": 999999}, "corpus"),
        ({"corpus": None, "extra": 1}, "extra"),
        ({"corpus": "CORPUS", "params": {"min_entropy": "NaN"}}, "params.min_entropy"),
        (
            {"corpus": "CORPUS", "params": {"min_variation_count": 10**20}},
            "params.min_variation_count",
        ),
        ({"corpus": "CORPUS", "params": [1]}, "params"),
    ],
)
def test_refused_bodies_name_the_field_and_write_nothing(admin_client, sent_tasks, body, field):
    corpus = tiny_corpus()
    if body.get("corpus") == "CORPUS":
        body = {**body, "corpus": corpus.pk}
    response = admin_client.post(URL, body, content_type="application/json")
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not MiningJob.objects.exists() and sent_tasks == []


def test_malformed_json_is_a_400(admin_client):
    response = admin_client.post(URL, b'{"corpus": 1, "corpus": 2', content_type="application/json")
    assert response.status_code == 400
    response = admin_client.post(URL, b"[1, 2]", content_type="application/json")
    assert response.status_code == 400


def test_detail_lists_the_mined_concepts(admin_client):
    job = run_in_foreground(start_mining(synthetic_corpus(), {"max_examples": 2}, enqueue=False).pk)
    body = admin_client.get(f"{URL}{job.pk}/").json()
    assert body["status"] == "finished" and body["pos_used"] is False
    concepts = {c["lemma"]: c for c in body["concepts"]}
    assert set(concepts) == {"trip", "bank", "ring", "sheet"}
    viaje = next(v for v in concepts["trip"]["variations"] if v["lemma"] == "viaje")
    assert viaje == {"lemma": "viaje", "label": "viaje/viajes",
                     "surface_forms": ["viaje", "viajes"], "count": 110}  # fmt: skip
    assert body["stats"]["after_entropy_filter"] == 4


def test_staff_only(client, annotator_client):
    job = start_mining(tiny_corpus(), enqueue=False)
    for c in (client, annotator_client):
        assert c.get(URL).status_code in (401, 403)
        assert c.get(f"{URL}{job.pk}/").status_code in (401, 403)
        assert c.post(
            URL, {"corpus": job.corpus_id}, content_type="application/json"
        ).status_code in (401, 403)
    assert MiningJob.objects.count() == 1
