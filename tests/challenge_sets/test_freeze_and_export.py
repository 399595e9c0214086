"""Freeze: immutable numbered versions; every export of a version is byte-identical forever."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest
from django.urls import reverse

from challenge_sets import exports, services, validation
from challenge_sets.models import ChallengeItem
from challenge_sets.versions import freeze_version
from tests.challenge_sets.conftest import ROWS, judge, make_set

pytestmark = pytest.mark.django_db


def validated_set():
    challenge_set = make_set(rows=ROWS, overlap=1, threshold=30)
    validation.send_for_validation(challenge_set)
    judge(challenge_set.campaign, "rater", score=35)
    validation.refresh_results(challenge_set)
    items = list(ChallengeItem.objects.filter(challenge_set=challenge_set).order_by("id"))
    services.decide_items(challenge_set, [i.pk for i in items[:2]], "accepted")
    services.decide_items(challenge_set, [items[2].pk], "rejected", reason="not hard for people")
    return challenge_set, items


def every_export(client, challenge_set, number) -> dict[str, bytes]:
    out = {}
    version = challenge_set.versions.get(number=number)
    for fmt in exports.formats_for(version):
        response = client.get(
            reverse("challenge_sets:download", args=[challenge_set.pk, number, fmt])
        )
        assert response.status_code == 200, fmt
        assert response.streaming
        out[fmt] = b"".join(response.streaming_content)
    return out


def test_freeze_holds_only_accepted_validated_items_with_a_checksum(curator):
    challenge_set, items = validated_set()
    pending = services.add_items(challenge_set, [])  # nothing new: still three items
    assert pending.added == 0
    version = freeze_version(challenge_set, user=curator)
    assert (version.number, version.n_items) == (1, 2)
    records = list(exports.records(version))
    assert [r["id"] for r in records] == [f"item-{items[0].pk}", f"item-{items[1].pk}"]
    assert records[0]["provenance"]["file"] == "test.jsonl"
    assert records[0]["human_difficulty"] == 65.0
    assert records[0]["decision"]["status"] == "accepted"
    assert version.checksum == hashlib.sha256(version.items_jsonl.encode()).hexdigest()
    manifest = json.loads(version.manifest)
    assert manifest["checksum"] == version.checksum
    assert manifest["counts"]["items"] == 2 and manifest["licence"] == "CC-BY-4.0"
    assert manifest["counts"]["by_language_pair"] == {"en-cs": 2}
    assert manifest["policy"]["threshold"] == 30.0
    # The ESA annotations of exactly those items (3 translations), QC-passed annotators only.
    lines = [json.loads(line) for line in version.annotations.splitlines()]
    assert len(lines) == 3 and {row["qc"]["verdict"] for row in lines} == {"pass"}
    assert freeze_version(challenge_set, user=curator).number == 2


def test_a_frozen_version_exports_the_same_bytes_whatever_happens_later(curator_client, curator):
    challenge_set, items = validated_set()
    version = freeze_version(challenge_set, user=curator)
    first = every_export(curator_client, challenge_set, version.number)
    # The live set moves on: decisions change, an item's text is edited, new items arrive.
    services.decide_items(challenge_set, [items[0].pk], "rejected", reason="second thoughts")
    ChallengeItem.objects.filter(pk=items[1].pk).update(source="edited", human_difficulty=1.0)
    services.add_items_from_source(
        challenge_set, "jsonl", {"file": b'{"source":"new","src_lang":"en"}'}
    )
    again = every_export(curator_client, challenge_set, version.number)
    assert again == first
    assert hashlib.sha256(first["jsonl"]).hexdigest() == version.checksum
    assert json.loads(first["manifest"])["checksum"] == version.checksum


def test_export_shapes_wmt_sources_and_the_hugging_face_folder(curator_client, curator):
    challenge_set, items = validated_set()
    version = freeze_version(challenge_set, user=curator)
    out = every_export(curator_client, challenge_set, version.number)
    wmt = [json.loads(line) for line in out["wmt-jsonl"].decode().splitlines()]
    assert [(r["lp"], r["seg_id"], r["src"]) for r in wmt] == [
        ("en-cs", f"item-{items[0].pk}", ROWS[0]["source"]),
        ("en-cs", f"item-{items[1].pk}", ROWS[1]["source"]),
    ]
    assert out["sources"].decode().splitlines() == [ROWS[0]["source"], ROWS[1]["source"]]
    archive = zipfile.ZipFile(io.BytesIO(out["hf"]))
    folder = f"{challenge_set.slug}-v1"
    assert archive.namelist() == [f"{folder}/README.md", f"{folder}/data/en-cs.jsonl",
                                  f"{folder}/manifest.json"]  # fmt: skip
    rows = [json.loads(line) for line in archive.read(f"{folder}/data/en-cs.jsonl").splitlines()]
    assert rows[0]["translations"][0] == {"system": "mt-a", "text": ROWS[0]["translations"]["mt-a"]}
    assert json.loads(rows[0]["provenance"])["id"] == "a"
    card = archive.read(f"{folder}/README.md").decode()
    assert card.startswith("---\nlicense: cc-by-4.0\n")
    assert "path: data/en-cs.jsonl" in card and "- items: 2" in card
    assert version.checksum in card


def test_api_freezes_and_streams_the_same_bytes(curator_client):
    challenge_set, _ = validated_set()
    response = curator_client.post(f"/api/challenge-sets/{challenge_set.pk}/versions/")
    assert response.status_code == 201 and response.json()["number"] == 1
    url = f"/api/challenge-sets/{challenge_set.pk}/versions/1/export/"
    api = b"".join(curator_client.get(url, {"export_format": "hf"}).streaming_content)
    page = b"".join(
        curator_client.get(
            reverse("challenge_sets:download", args=[challenge_set.pk, 1, "hf"])
        ).streaming_content
    )
    assert api == page
    assert curator_client.get(url, {"export_format": "pdf"}).status_code == 400


def test_nothing_to_freeze_is_refused():
    challenge_set = make_set()
    with pytest.raises(services.ChallengeSetError, match="nothing to freeze"):
        freeze_version(challenge_set)
    assert not challenge_set.versions.exists()


def test_every_download_says_what_it_is(curator_client, curator):
    # Regression: the ESA annotations (JSONL) were served as text/plain.
    challenge_set, _ = validated_set()
    version = freeze_version(challenge_set, user=curator)
    types = {
        fmt: curator_client.get(
            reverse("challenge_sets:download", args=[challenge_set.pk, 1, fmt])
        )["Content-Type"]
        for fmt in exports.formats_for(version)
    }
    assert types == {
        "jsonl": "application/jsonl; charset=utf-8",
        "wmt-jsonl": "application/jsonl; charset=utf-8",
        "sources": "text/plain; charset=utf-8",
        "annotations": "application/jsonl; charset=utf-8",
        "hf": "application/zip",
        "manifest": "application/json; charset=utf-8",
    }
