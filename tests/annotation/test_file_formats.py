"""Campaign files of other tools import as they are: Appraise batches (real files from
Appraise's examples), recognised automatically, refused with the right format named."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation import formats
from annotation.models import Campaign, Item

pytestmark = pytest.mark.django_db


@pytest.fixture
def appraise_esa(shared_data) -> bytes:
    return (shared_data / "formats" / "appraise" / "batches_esa.json").read_bytes()


def test_formats_are_recognised(appraise_esa):
    assert formats.sniff(appraise_esa) == "appraise"
    assert formats.sniff(b'{"source": "a", "target": "b"}\n{"source": "c", "target": "d"}\n') == (
        "jsonl"
    )
    assert formats.sniff(b"system\tdoc\tseg_id\n") is None


def test_an_appraise_esa_batches_file_imports_with_checks_and_tutorials(appraise_esa, tmp_path):
    path = tmp_path / "batches_esa.json"
    path.write_bytes(appraise_esa)

    call_command("import_campaign", str(path), "--name", "Appraise ESA", "--protocol", "esa")

    campaign = Campaign.objects.get(name="Appraise ESA")
    items = list(campaign.items.order_by("position"))
    # The two batches repeat the same six tutorials: each is kept once.
    assert len(items) == 194
    assert Counter(item.kind for item in items) == {
        "regular": 164,
        "attention_check": 24,
        "tutorial": 6,
    }
    assert [item.seg_id for item in items if item.kind == "tutorial"] == [
        str(n) for n in range(1000000, 1000006)
    ]
    assert {(item.src_lang, item.tgt_lang) for item in items} == {("en", "de")}
    bad = next(item for item in items if item.meta["appraise_item_type"] == "BAD")
    assert bad.expected == {"score_max": 50}
    # A BAD item takes the document of the item it copies; the file's documentID stays in meta.
    assert (bad.doc_id, bad.meta["appraise_document_id"], bad.system) == (
        "test-en-news_seattle_times.799809",
        "test-en-news_seattle_times.799809#bad",
        "Gemini-1.5-Pro",
    )
    first = items[0]
    assert (first.kind, first.doc_id, first.target) == (
        "tutorial",
        "ende-tutorial1",
        "The dog ran outside.",
    )
    # The instruction is what to do, shown with the item (not feedback after it).
    assert first.expected["score_min"] == 90 and "slider" in first.expected["instruction"]
    assert "explanation" not in first.expected
    walked = items[1]
    (span,) = walked.expected["spans"]
    assert walked.target[span["start"] : span["end"]] == "walked"
    assert "<u>" not in walked.expected["instruction"]


def test_appraise_mqm_tutorials_keep_omissions_and_prefilled_spans(shared_data):
    data = (shared_data / "formats" / "appraise" / "batches_mqm.json").read_bytes()
    items = formats.read_items("appraise", data)

    omission = next(i for i in items if "[MISSING]" in i.get("expected", {}).get("instruction", ""))
    assert omission["expected"]["spans"] == [
        {"start": len(omission["target"]), "end": len(omission["target"]), "missing": True}
    ]
    unmark = next(i for i in items if i.get("prefill_spans"))
    assert unmark["expected"]["no_spans"] is True
    assert unmark["target"][8:11] == "ran" and unmark["prefill_spans"][0]["start"] == 8

    call_command(
        "import_campaign",
        str(shared_data / "formats" / "appraise" / "batches_mqm.json"),
        "--name",
        "Appraise MQM",
        "--protocol",
        "mqm",
        "--format",
        "appraise",
    )
    assert Item.objects.filter(campaign__name="Appraise MQM").count() == 194


def test_the_wrong_format_is_refused_with_the_right_one_named(appraise_esa, tmp_path):
    path = tmp_path / "batches.json"
    path.write_bytes(appraise_esa)

    with pytest.raises(CommandError) as caught:
        call_command(
            "import_campaign", str(path), "--name", "X", "--protocol", "esa", "--format", "jsonl"
        )

    assert (
        f"{path}: this looks like an Appraise batches file; import it with the format "
        "'appraise'" in str(caught.value)
    )
    assert not Campaign.objects.exists()


def test_a_broken_appraise_item_names_its_batch_and_item(appraise_esa):
    document = json.loads(appraise_esa)
    document[1]["items"][4]["itemType"] = "XYZ"

    with pytest.raises(formats.FormatError, match="batch 2, item 5: itemType must be one of"):
        formats.read_items("appraise", json.dumps(document).encode())


def test_the_api_takes_an_uploaded_appraise_file(admin_user, appraise_esa, tmp_path):
    client = APIClient()
    client.force_authenticate(admin_user)
    path = tmp_path / "batches_esa.json"
    path.write_bytes(appraise_esa)

    with path.open("rb") as upload:
        response = client.post(
            "/api/campaigns/import/",
            {"name": "From the API", "protocol": "esa", "file": upload},
            format="multipart",
        )

    assert response.status_code == 201, response.json()
    assert Campaign.objects.get(name="From the API").items.count() == 194


def test_the_import_page_recognises_an_appraise_file(admin_client, appraise_esa, tmp_path):
    path = tmp_path / "batches_esa.json"
    path.write_bytes(appraise_esa)

    page = admin_client.get("/annotation/campaigns/new/")
    with path.open("rb") as upload:
        response = admin_client.post(
            "/annotation/campaigns/new/",
            {
                "name": "From the page",
                "protocol": "esa",
                "file_format": "auto",
                "overlap": 1,
                "status": "open",
                "qualification_min_accuracy": 0.8,
                "qc_min_pass_rate": 0.8,
                "qc_min_checks": 1,
                "qc_min_seconds_per_item": 3,
                "qc_max_fast_fraction": 0.5,
                "claim_ttl_seconds": 1800,
                "items_file": upload,
            },
        )

    assert "Appraise batches file" in page.content.decode()
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Campaign.objects.get(name="From the page").items.count() == 194
