"""Uploaded JSONL: every bad line named by its number, and nothing written (service, page, API)."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from challenge_sets import services
from challenge_sets.models import AuditEntry, ChallengeItem
from challenge_sets.sources import SourceError
from tests.challenge_sets.conftest import ROWS, jsonl, make_set

pytestmark = pytest.mark.django_db

BAD = (
    jsonl(ROWS[0])
    + "{not json\n"
    + jsonl({"source": "", "src_lang": "en"})
    + "\n"
    + jsonl({"source": "x", "src_lang": "en", "automatic_difficulty": 140})
    + jsonl({"source": "y", "src_lang": "en", "choices": ["a", "b"], "attested": "c"})
    + jsonl({"source": "z", "src_lang": "en", "colour": "red"})
    + jsonl(ROWS[1] | {"id": "a"})
)
EXPECTED = [
    "line 2: not valid JSON (Expecting property name enclosed in double quotes at column 2)",
    "line 3: source must be a non-empty string",
    "line 5: automatic_difficulty must be a number from 0 to 100",
    "line 6: attested must be one of the choices",
    "line 7: unknown keys colour",
    "line 8: id repeats line 1",
]


def _snapshot(challenge_set):
    return (ChallengeItem.objects.filter(challenge_set=challenge_set).count(),
            AuditEntry.objects.filter(challenge_set=challenge_set).count())  # fmt: skip


def test_service_lists_every_bad_line_and_writes_nothing():
    challenge_set = make_set(rows=ROWS[2:])
    before = _snapshot(challenge_set)
    with pytest.raises(SourceError) as caught:
        services.add_items_from_source(challenge_set, "jsonl", {"file": BAD.encode()})
    assert caught.value.errors == EXPECTED
    assert _snapshot(challenge_set) == before


def test_page_shows_the_numbered_errors_and_writes_nothing(curator_client):
    challenge_set = make_set(rows=ROWS[2:])
    before = _snapshot(challenge_set)
    upload = SimpleUploadedFile("bad.jsonl", BAD.encode(), content_type="application/jsonl")
    response = curator_client.post(
        reverse("challenge_sets:add_from_source", args=[challenge_set.pk, "jsonl"]),
        {"jsonl-file": upload},
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was added" in html
    for message in EXPECTED[1:]:
        assert message in html
    assert _snapshot(challenge_set) == before


def test_api_refuses_with_the_line_numbers_and_writes_nothing(curator_client):
    challenge_set = make_set(rows=ROWS[2:])
    before = _snapshot(challenge_set)
    upload = SimpleUploadedFile("bad.jsonl", BAD.encode())
    response = curator_client.post(
        f"/api/challenge-sets/{challenge_set.pk}/items/", {"source": "jsonl", "file": upload}
    )
    assert response.status_code == 400
    assert response.json()["errors"] == EXPECTED
    assert _snapshot(challenge_set) == before


def test_a_good_file_adds_items_once_and_flags_near_duplicates(curator_client):
    challenge_set = make_set(rows=ROWS[:1])
    near = ROWS[0] | {"id": "a2", "source": ROWS[0]["source"].replace("floods", "flood")}
    upload = SimpleUploadedFile("good.jsonl", jsonl(*ROWS, near).encode())
    response = curator_client.post(
        f"/api/challenge-sets/{challenge_set.pk}/items/", {"source": "jsonl", "file": upload}
    )
    assert response.status_code == 200
    # ROWS came from another file name, so they are new references; the near-copy is flagged.
    assert response.json() == {"added": 4, "skipped": 0, "near_duplicates": 2}
    flagged = ChallengeItem.objects.filter(challenge_set=challenge_set, duplicate_of__isnull=False)
    assert {item.provenance["id"] for item in flagged} == {"a", "a2"}
    first = ChallengeItem.objects.filter(challenge_set=challenge_set).order_by("id").first()
    assert all(item.duplicate_of_id == first.pk for item in flagged)
    again = SimpleUploadedFile("good.jsonl", jsonl(*ROWS, near).encode())
    response = curator_client.post(
        f"/api/challenge-sets/{challenge_set.pk}/items/", {"source": "jsonl", "file": again}
    )
    assert response.json()["skipped"] == 4
    item = ChallengeItem.objects.get(challenge_set=challenge_set, origin_ref="good.jsonl:b")
    assert item.provenance["line"] == 2 and item.provenance["file"] == "good.jsonl"
    assert json.dumps(item.translations, ensure_ascii=False).count("mt-a") == 1
