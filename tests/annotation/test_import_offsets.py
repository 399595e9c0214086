"""Span offsets at import: JavaScript tools count UTF-16 code units, the platform code points;
pre-filled spans are checked against the protocol and the campaign; every import page offers
an example file of each format it takes, and each example imports as it is."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation import formats
from annotation.formats.offsets import codepoint_offset
from annotation.models import Campaign, Item
from annotation.refusals import CampaignImportError
from annotation.services.campaigns import import_items
from tests.annotation.factories import CampaignFactory

pytestmark = pytest.mark.django_db

EXAMPLES = Path(settings.BASE_DIR) / "static" / "annotation" / "examples"
TARGET = "Lístky 🎟️ stojí dvacet eur."  # 🎟 takes two UTF-16 code units, code point 7
UTF16 = {"start": 17, "end": 23}  # "dvacet" as JavaScript counts
CODEPOINTS = {"start": 16, "end": 22}


def esa_item(**fields) -> dict:
    return {
        "doc_id": "d1",
        "seg_id": "1",
        "source": "Tickets cost ten euros 🎟️.",
        "target": TARGET,
        "system": "S",
        **fields,
    }


@pytest.fixture
def api(admin_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


def test_utf16_offsets_map_to_code_points_and_never_inside_a_character():
    assert TARGET[CODEPOINTS["start"] : CODEPOINTS["end"]] == "dvacet"
    assert [codepoint_offset(TARGET, u) for u in (0, 7, 9, 17, 23, 28)] == [0, 7, 8, 16, 22, 27]
    with pytest.raises(ValueError, match="UTF-16 offset 8 falls inside the character '🎟' at 7"):
        codepoint_offset(TARGET, 8)
    with pytest.raises(ValueError, match="UTF-16 offset 30 is beyond the end"):
        codepoint_offset(TARGET, 30)


def test_the_api_converts_utf16_offsets_of_prefilled_and_expected_spans(api):
    check = esa_item(seg_id="2", kind="attention_check", expected={"spans": [UTF16]})
    items = [esa_item(prefill_spans=[{**UTF16, "severity": "major"}]), check]

    response = api.post(
        "/api/campaigns/import/",
        {"name": "JS", "protocol": "esa", "items": items, "offset_unit": "utf16"},
        format="json",
    )

    assert response.status_code == 201, response.json()
    prefilled, check_item = Item.objects.filter(campaign__name="JS").order_by("position")
    assert prefilled.prefill_spans == [{**CODEPOINTS, "severity": "major"}]
    assert check_item.expected == {"spans": [CODEPOINTS]}


def test_code_points_stay_the_default(api):
    items = [esa_item(prefill_spans=[{**CODEPOINTS, "severity": "minor"}])]

    response = api.post(
        "/api/campaigns/import/", {"name": "Py", "protocol": "esa", "items": items}, format="json"
    )

    assert response.status_code == 201, response.json()
    (stored,) = Item.objects.filter(campaign__name="Py")
    assert stored.target[stored.prefill_spans[0]["start"] : stored.prefill_spans[0]["end"]] == (
        "dvacet"
    )


def test_jsonl_in_utf16_converts_and_an_offset_inside_a_character_is_refused(api):
    good = json.dumps(esa_item(prefill_spans=[{**UTF16, "severity": "minor"}]))
    split = json.dumps(esa_item(seg_id="2", prefill_spans=[{"start": 8, "end": 9}]))

    response = api.post(
        "/api/campaigns/import/",
        {"name": "L", "protocol": "esa", "jsonl": f"{good}\n{split}\n", "offset_unit": "utf16"},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"line": 2, "reason": "UTF-16 offset 8 falls inside the character '🎟' at 7"}
    ]
    assert not Campaign.objects.exists()

    response = api.post(
        "/api/campaigns/import/",
        {"name": "L", "protocol": "esa", "jsonl": good, "offset_unit": "utf16"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert Item.objects.get().prefill_spans == [{**CODEPOINTS, "severity": "minor"}]


def test_an_offset_unit_is_refused_for_formats_that_carry_their_own(api):
    with (EXAMPLES / "appraise-batches.json").open("rb") as upload:
        response = api.post(
            "/api/campaigns/import/",
            {"name": "A", "protocol": "esa", "file": upload, "offset_unit": "utf16"},
            format="multipart",
        )

    assert response.status_code == 400
    assert response.json()["offset_unit"] == ["appraise files set their own offset unit"]
    assert not Campaign.objects.exists()

    response = api.post(
        "/api/campaigns/import/",
        {"name": "A", "protocol": "esa", "items": [esa_item()], "offset_unit": "bytes"},
        format="json",
    )
    assert response.status_code == 400 and "offset_unit" in response.json()


def test_appraise_offsets_after_an_emoji_land_on_the_marked_word():
    items = formats.read_items("appraise", (EXAMPLES / "appraise-batches.json").read_bytes())

    tickets = next(i for i in items if i["target"] == TARGET)
    (span,) = tickets["prefill_spans"]
    assert (span["start"], span["end"]) == (16, 22)
    tutorial = items[0]
    (expected,) = tutorial["expected"]["spans"]
    assert tutorial["target"][expected["start"] : expected["end"]] == "úterý"


def test_an_appraise_offset_inside_a_character_names_its_batch_and_item():
    document = json.loads((EXAMPLES / "appraise-batches.json").read_bytes())
    document[0]["items"][1]["mqm"] = [{"start_i": 8, "end_i": 12, "severity": "minor"}]

    with pytest.raises(
        formats.FormatError, match=re.escape("batch 1, item 2: span 8..12: UTF-16 offset 8")
    ):
        formats.read_items("appraise", json.dumps(document).encode())


# --- pre-filled spans against the protocol --------------------------------------------------


def jsonl_file(tmp_path, *items: dict) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return path


def import_jsonl(path: Path, protocol: str, *extra: str) -> None:
    call_command("import_campaign", str(path), "--name", "M", "--protocol", protocol, *extra)


@pytest.mark.parametrize(
    ("span", "protocol", "message"),
    [
        (
            {"category": "Linguistic conventions", "subcategory": "Grammar"},
            "mqm",
            ":2: prefill_spans[1]: unknown MQM category 'Linguistic conventions'",
        ),
        (
            {"category": "Accuracy/Wrong term"},
            "esa_mqm",
            ":2: prefill_spans[1]: unknown subcategory 'Wrong term' for MQM category 'Accuracy'",
        ),
        ({"severity": "neutral"}, "esa", ":2: prefill_spans[1]: unknown severity 'neutral'"),
        ({"severity": "fatal"}, "mqm", ":2: prefill_spans[1]: unknown severity 'fatal'"),
    ],
)
def test_a_prefilled_span_the_protocol_does_not_know_is_refused_by_line(
    tmp_path, span, protocol, message
):
    good = esa_item(prefill_spans=[{**CODEPOINTS, "severity": "minor"}])
    bad = esa_item(seg_id="2", prefill_spans=[{**CODEPOINTS, "severity": "major", **span}])
    path = jsonl_file(tmp_path, good, bad)

    with pytest.raises(CommandError) as caught:
        import_jsonl(path, protocol)

    assert f"{path}{message}" in str(caught.value)
    assert not Campaign.objects.exists() and not Item.objects.exists()


def test_mqm_prefilled_labels_are_stored_in_the_typology_spelling(tmp_path):
    span = {**CODEPOINTS, "severity": "major", "category": "accuracy/mistranslation"}
    import_jsonl(jsonl_file(tmp_path, esa_item(prefill_spans=[span])), "mqm")

    assert Item.objects.get().prefill_spans == [
        {**CODEPOINTS, "severity": "major", "category": "Accuracy", "subcategory": "Mistranslation"}
    ]


def test_a_critical_prefilled_span_needs_a_campaign_that_allows_critical(api):
    items = [esa_item(prefill_spans=[{**CODEPOINTS, "severity": "critical", "category": "Other"}])]

    refused = api.post(
        "/api/campaigns/import/", {"name": "C", "protocol": "mqm", "items": items}, format="json"
    )

    assert refused.status_code == 400
    assert refused.json()["errors"] == [
        {
            "item": 1,
            "reason": "d1 1 S: prefill_spans[1]: severity must be one of minor, major in this "
            "campaign, got 'critical'",
        }
    ]
    assert not Campaign.objects.exists()

    accepted = api.post(
        "/api/campaigns/import/",
        {"name": "C", "protocol": "mqm", "items": items, "settings": {"mqm_allow_critical": True}},
        format="json",
    )
    assert accepted.status_code == 201, accepted.json()


def test_adding_items_checks_prefilled_severities_against_the_campaign():
    campaign = CampaignFactory(protocol="esa")
    line = json.dumps(esa_item(prefill_spans=[{**CODEPOINTS, "severity": "critical"}]))

    with pytest.raises(CampaignImportError, match="severity must be one of minor, major"):
        import_items(campaign, line)
    assert not campaign.items.exists()


def test_pearmut_prefilled_labels_are_checked_with_the_place_named(tmp_path):
    spans = {"B": [{"start_i": 0, "end_i": 5, "severity": "Major", "category": "Style/Wobbly"}]}
    document = [{"item_id": "s1", "src": "Hello.", "tgt": {"A": "Ahoj.", "B": "Nazdar."},
                 "error_spans": spans}]  # fmt: skip
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"campaign_id": "c", "info": {}, "data": [document]}))

    with pytest.raises(CommandError) as caught:
        import_jsonl(path, "mqm")

    assert (
        f"{path}: item 2: data, document 1, item 1, system 'B': prefill_spans[1]: unknown "
        "subcategory 'Wobbly' for MQM category 'Style'"
    ) in str(caught.value)
    assert not Campaign.objects.exists()


# --- example files on the import pages ------------------------------------------------------


def test_the_new_campaign_page_offers_an_example_and_fields_of_every_format(admin_client):
    page = admin_client.get("/annotation/campaigns/new/").content.decode()

    links = re.findall(r'href="/static/annotation/examples/([^"]+)" download', page)
    assert links == [
        "items.jsonl",
        "appraise-batches.json",
        "google-mqm.tsv",
        "pearmut-campaign.json",
    ]
    for file_format in formats.documented():
        assert f"<code>{file_format.fields[0][0]}</code>" in page
    assert "<code>error_spans: {system: [...]}</code>" in page


def test_the_add_items_form_offers_the_jsonl_example(admin_client):
    campaign = CampaignFactory(protocol="esa")

    page = admin_client.get(f"/annotation/campaigns/{campaign.pk}/").content.decode()

    assert re.findall(r'href="/static/annotation/examples/([^"]+)" download', page) == [
        "items.jsonl"
    ]


@pytest.mark.parametrize("file_format", formats.documented(), ids=lambda f: f.name)
def test_every_example_file_is_recognised_and_imports(tmp_path, file_format):
    path = EXAMPLES / file_format.example
    assert formats.sniff(path.read_bytes()) == file_format.name

    call_command(
        "import_campaign", str(path), "--name", "E", "--protocol", "esa",
        "--src-lang", "en", "--tgt-lang", "cs",
    )  # fmt: skip

    assert Campaign.objects.get(name="E").items.exists()
