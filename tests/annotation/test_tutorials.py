"""Tutorials: their instruction is shown with the item, before it is answered; each distinct
tutorial is done once per campaign, however often a file repeats it; and they count in neither
the done count nor the total, on "My tasks" as on the annotate page."""

from __future__ import annotations

import json
import re

import pytest

from annotation import protocols
from annotation.services.campaigns import import_campaign
from tests.annotation.factories import enrolled

pytestmark = pytest.mark.django_db

INSTRUCTION = "The word <u>walked</u> is incorrect. Mark it as a minor error."


def _tutorial() -> dict:
    return {
        "itemType": "TGT",
        "documentID": "ende-tutorial1",
        "itemID": 1000001,
        "targetID": "ende-tutorial1",
        "sourceText": "The dog walked outside.",
        "targetText": "Der Hund ging nach draußen.",
        "mqm": {
            "tutorial": {"instruction": INSTRUCTION, "mqm_target": [{"start_i": 9, "end_i": 13}]},
            "payload": [],
        },
    }


def _item(n: int) -> dict:
    return {
        "itemType": "TGT", "documentID": "news-1", "itemID": n, "targetID": "S",
        "sourceText": f"Sentence {n} of the news.", "targetText": f"Satz {n} der Nachrichten.",
        "mqm": [],
    }  # fmt: skip


def _batch(*items: dict) -> dict:
    return {"task": {"sourceLanguage": "eng", "targetLanguage": "deu"}, "items": list(items)}


def _header_place(page: str) -> str:
    return re.search(r"· ((?:item|tutorial) \d+ of \d+)", page).group(1)


def test_a_tutorial_shows_its_instruction_first_once_and_apart_from_the_count(client):
    # Appraise repeats the same tutorial at the head of each batch.
    data = json.dumps([_batch(_tutorial(), _item(1), _item(2)), _batch(_tutorial(), _item(3))])
    campaign = import_campaign(data, name="Tutorials", protocol="esa", file_format="appraise")
    assert campaign.items.filter(kind="tutorial").count() == 1
    annotator = enrolled(campaign, "ann")
    client.force_login(annotator.user)
    tasks = "/annotation/tasks/"
    assert "0 submitted of 3" in client.get(tasks).content.decode()

    places = []
    while True:
        location = client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"]
        if "/items/" not in location:
            finish = client.get(location).content.decode()
            break
        page = client.get(location).content.decode()
        places.append(_header_place(page))
        if not places[1:]:
            # Before any answer: what to do, tags stripped, above the texts to judge.
            assert "The word walked is incorrect. Mark it as a minor error." in page
            assert page.index('id="tutorial-instruction"') < page.index('class="pair')
        answer = {"spans": [{"start": 9, "end": 13, "severity": "minor"}], "score": 70}
        client.post(f"{location}submit/", {"answer": json.dumps(answer)})
        if not places[1:]:
            assert "0 submitted of 3" in client.get(tasks).content.decode()

    assert places == ["tutorial 1 of 1", "item 1 of 3", "item 2 of 3", "item 3 of 3"]
    assert "3 submitted of 3" in client.get(tasks).content.decode()
    assert "3 answers submitted" in finish


def test_only_a_tutorial_carries_an_instruction():
    expected = {"score_max": 50, "instruction": "Score it low"}
    check = {"doc_id": "d", "seg_id": "1", "source": "a b c", "target": "x y z",
             "kind": "attention_check", "expected": expected}  # fmt: skip
    tutorial = check | {"kind": "tutorial"}

    with pytest.raises(protocols.ItemError, match="instruction is only for tutorial items"):
        protocols.normalize_item("esa", check)
    assert protocols.normalize_item("esa", tutorial)["expected"] == {
        "score_max": 50,
        "instruction": "Score it low",
    }
