"""Campaign import: JSONL from the command, the upload page and the services; all or nothing."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotation.models import Campaign, Item
from annotation.refusals import CampaignImportError
from annotation.services.campaigns import add_items, create_campaign, import_campaign
from tests.annotation.factories import choice_item, esa_item

pytestmark = pytest.mark.django_db


def jsonl(*rows) -> str:
    return "".join(
        (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows
    )


def test_command_imports_every_field(tmp_path, capsys):
    path = tmp_path / "items.jsonl"
    path.write_text(
        jsonl(
            esa_item(1, origin="search", origin_ref="run-7/pull-3", meta={"topic": "aviation"}),
            esa_item(2, prefill_spans=[{"start": 0, "end": 4, "severity": "major"}]),
            esa_item(3, kind="attention_check", expected={"score_max": 40}),
        ),
        encoding="utf-8",
    )
    call_command(
        "import_campaign", str(path), "--name", "News", "--protocol", "esa", "--overlap", "3"
    )
    campaign = Campaign.objects.get(name="News")
    assert (campaign.protocol, campaign.overlap, campaign.src_lang, campaign.tgt_lang) == (
        "esa", 3, "en", "de",
    )  # fmt: skip
    items = list(campaign.items.order_by("position"))
    assert [i.position for i in items] == [0, 1, 2]
    assert (items[0].seg_id, items[0].origin, items[0].origin_ref, items[0].meta) == (
        "1", "search", "run-7/pull-3", {"topic": "aviation"},
    )  # fmt: skip
    assert items[1].prefill_spans == [{"start": 0, "end": 4, "severity": "major"}]
    assert (items[2].kind, items[2].expected) == ("attention_check", {"score_max": 40})
    assert "with 3 items" in capsys.readouterr().out


def test_command_reports_each_bad_line_and_writes_nothing(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        jsonl(
            esa_item(1),
            "",
            "{not json",
            {**esa_item(4), "target": ""},
            {**esa_item(5), "colour": "red"},
            esa_item(6, kind="attention_check"),
        ),
        encoding="utf-8",
    )
    with pytest.raises(CommandError) as caught:
        call_command("import_campaign", str(path), "--name", "Bad", "--protocol", "esa")
    message = str(caught.value)
    assert f"{path}:3: not valid JSON" in message
    assert f"{path}:4: target is required for esa and mqm items" in message
    assert f"{path}:5: unknown field(s): colour" in message
    assert f"{path}:6: attention_check items need expected" in message
    assert f"{path}:1:" not in message and f"{path}:2:" not in message
    assert Campaign.objects.count() == 0 and Item.objects.count() == 0


def test_invalid_utf8_and_span_offsets_are_reported_by_line():
    data = (
        jsonl(esa_item(1)).encode()
        + b'{"doc_id": "d", "seg_id": 2, "source": "x", "target": "\xff"}\n'
        + jsonl(esa_item(3, prefill_spans=[{"start": 2, "end": 99}])).encode()
    )
    with pytest.raises(CampaignImportError) as caught:
        import_campaign(data.splitlines(keepends=True), name="U", protocol="esa")
    assert caught.value.errors[0] == (2, "not valid UTF-8")
    assert (
        caught.value.errors[1][0] == 3 and "need 0 <= start < end <=" in caught.value.errors[1][1]
    )
    assert not Campaign.objects.exists()


def test_span_offsets_must_not_split_a_grapheme():
    item = esa_item(1, target="Cafe\u0301 au lait", prefill_spans=[{"start": 0, "end": 4}])
    with pytest.raises(CampaignImportError, match="splits a character"):
        create_campaign("G", "esa", [item])
    assert not Campaign.objects.exists()


def test_duplicate_name_and_bad_settings_write_nothing():
    create_campaign("Taken", "esa", [esa_item(1)])
    with pytest.raises(ValidationError, match="already exists"):
        import_campaign(jsonl(esa_item(1)), name="Taken", protocol="esa")
    with pytest.raises(ValidationError):
        create_campaign("Zero overlap", "esa", [esa_item(1)], overlap=0)
    with pytest.raises(ValidationError):
        create_campaign("Bad weights", "mqm", [esa_item(1)], mqm_weights={"tiny": 1})
    assert list(Campaign.objects.values_list("name", flat=True)) == ["Taken"]
    assert Item.objects.count() == 1


def test_choice_items_need_distinct_options_and_expected_among_them():
    good = choice_item(1, kind="tutorial", expected="芸術")
    campaign = create_campaign("Lexical", "choice", [good, choice_item(2)], overlap=3)
    assert campaign.items.get(seg_id="1").expected == {"selected": ["芸術"]}
    with pytest.raises(CampaignImportError) as caught:
        add_items(
            campaign,
            [choice_item(3), choice_item(4, choices=["a", "a"]),
             choice_item(5, kind="attention_check", expected=["zzz"])],
        )  # fmt: skip
    assert caught.value.unit == "item"
    assert [n for n, _ in caught.value.errors] == [2, 3]
    assert campaign.items.count() == 2


def test_add_items_appends_positions_with_origin():
    campaign = create_campaign("Growing", "esa", [esa_item(1), esa_item(2)])
    add_items(campaign, [esa_item(3, origin="lexical", origin_ref="rule:12")])
    assert list(campaign.items.order_by("position").values_list("position", "origin_ref")) == [
        (0, ""), (1, ""), (2, "rule:12"),
    ]  # fmt: skip


def test_upload_page_creates_campaign(admin_client):
    upload = SimpleUploadedFile("items.jsonl", jsonl(esa_item(1), esa_item(2)).encode())
    response = admin_client.post(
        "/annotation/campaigns/new/",
        {"name": "Uploaded", "protocol": "esa", "overlap": 2, "status": "open",
         "signup_open": "on", "qualification_min_accuracy": 0.8, "qc_min_pass_rate": 0.8,
         "qc_min_checks": 1, "qc_min_seconds_per_item": 3, "qc_max_fast_fraction": 0.5,
         "claim_ttl_seconds": 1800, "weight_major": 6, "items_file": upload},
    )  # fmt: skip
    campaign = Campaign.objects.get(name="Uploaded")
    assert response.status_code == 302
    assert response["Location"] == f"/annotation/campaigns/{campaign.pk}/"
    assert (campaign.overlap, campaign.items.count(), campaign.mqm_weights) == (
        2,
        2,
        {"major": 6.0},
    )
    assert campaign.src_lang == "en"


def test_upload_page_shows_line_errors_and_writes_nothing(admin_client):
    upload = SimpleUploadedFile("items.jsonl", jsonl(esa_item(1), "[1, 2]").encode())
    response = admin_client.post(
        "/annotation/campaigns/new/",
        {"name": "Broken", "protocol": "esa", "overlap": 1, "status": "open",
         "qualification_min_accuracy": 0.8, "qc_min_pass_rate": 0.8, "qc_min_checks": 1,
         "qc_min_seconds_per_item": 3, "qc_max_fast_fraction": 0.5, "claim_ttl_seconds": 1800,
         "items_file": upload},
    )  # fmt: skip
    assert response.status_code == 422
    assert "Nothing was imported" in response.content.decode()
    assert "line 2: each line must be a JSON object" in response.content.decode()
    assert not Campaign.objects.exists()


def test_add_items_upload_is_atomic(admin_client):
    campaign = create_campaign("Existing", "esa", [esa_item(1)])
    upload = SimpleUploadedFile("more.jsonl", jsonl(esa_item(2), {"seg_id": 3}).encode())
    response = admin_client.post(
        f"/annotation/campaigns/{campaign.pk}/items/import/", {"items_file": upload}, follow=True
    )
    assert "line 2: source is required" in response.content.decode()
    assert campaign.items.count() == 1
