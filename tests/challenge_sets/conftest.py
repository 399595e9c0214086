"""Personas and builders for challenge-set tests: a curator holds the permission via a group."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, Permission
from django.utils import timezone

from annotation.models import Enrollment, Item
from annotation.services.claims import next_item_for
from annotation.services.submissions import start_viewing, submit_annotation
from challenge_sets import services
from challenge_sets.sources.jsonl import read_candidates
from tests.annotation.factories import enrolled
from tests.factories import UserFactory


def curators_group() -> Group:
    group, _ = Group.objects.get_or_create(name="Curators")
    group.permissions.add(Permission.objects.get(codename="curate_challengeset"))
    return group


@pytest.fixture
def curator(db):
    user = UserFactory(username="curator", is_staff=True)
    user.groups.add(curators_group())
    return user


@pytest.fixture
def curator_client(client, curator):
    client.force_login(curator)
    return client


def jsonl(*rows: dict) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


ROWS = [
    {"id": "a", "source": "The bank by the river was closed for the spring floods.",
     "src_lang": "en", "tgt_lang": "cs", "automatic_difficulty": 72.5,
     "translations": {"mt-a": "Banka u řeky byla zavřená kvůli jarním povodním.",
                      "mt-b": "Břeh u řeky byl zavřen pro jarní povodně."}},
    {"id": "b", "source": "She kept the minutes while the board argued about the lease.",
     "src_lang": "en", "tgt_lang": "cs", "automatic_difficulty": 64.0,
     "translations": {"mt-a": "Zapisovala minuty, zatímco se rada hádala o nájmu."}},
    {"id": "c", "source": "Der Vertrag tritt mit Unterzeichnung in Kraft.", "src_lang": "de",
     "tgt_lang": "en", "automatic_difficulty": 40.0,
     "translations": {"mt-a": "The contract enters into force upon signature."}},
]  # fmt: skip


def make_set(name: str = "Hard en-cs", rows=ROWS, **policy):
    challenge_set = services.create_challenge_set(
        name=name, description="Texts MT gets wrong.", licence="CC-BY-4.0",
        provenance_notes="Built in tests.",
        policy={"protocol": "esa", "overlap": 2, "threshold": 30, **policy},
    )  # fmt: skip
    if rows:
        services.add_items(challenge_set, read_candidates(jsonl(*rows), "test.jsonl"))
    return challenge_set


def judge(campaign, name: str, *, score: int, check_score: int = 95, seconds: float = 10):
    """An annotator does every item: ``score`` on regular items, ``check_score`` on checks."""
    annotator = enrolled(campaign, name)
    now = timezone.now()
    while (item := next_item_for(annotator, campaign, now=now)) is not None:
        start_viewing(annotator, item, now=now)
        now += timedelta(seconds=seconds)
        value = check_score if item.kind == Item.Kind.ATTENTION_CHECK else score
        answer = {"spans": [], "score": value, "confirmed_low_score": True}
        submit_annotation(annotator, item, answer, now=now)
        now += timedelta(seconds=1)
    return Enrollment.objects.get(annotator=annotator, campaign=campaign)


CHECK = {"doc_id": "check", "seg_id": "1", "source": "The dog ran home.",
         "target": "Der Hund lief nach Hause.", "kind": "attention_check",
         "expected": {"score_min": 90, "no_spans": True}}  # fmt: skip
