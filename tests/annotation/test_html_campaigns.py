"""Campaigns whose item text is HTML (``text_format="html"``, ADR 0033): import from Appraise,
Pearmut and JSONL, the annotate page, submissions and exports over the visible text; plain
campaigns keep reading markup as text."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from rest_framework.test import APIClient

from annotation import exports
from annotation.item_refs import item_ref
from annotation.models import Annotation, Campaign
from annotation.refusals import CampaignImportError
from annotation.services.campaigns import create_campaign, import_campaign, import_items
from annotation.services.claims import next_item_for
from annotation.services.submissions import save_draft, submit_annotation
from tests.annotation.factories import enrolled

pytestmark = pytest.mark.django_db

SOURCE = "The <b>big dog</b> ran <script>alert(1)</script>away."
TARGET = 'Der <b>große Hund</b> 🐕 <span class="hl" onclick="x()">lief</span> weg.<br>Ende'
VISIBLE = "Der große Hund 🐕 lief weg.\nEnde"


def appraise_file(target: str = TARGET, mqm=None) -> bytes:
    item = {"itemType": "TGT", "sourceText": SOURCE, "targetText": target, "documentID": "d1",
            "itemID": 1, "targetID": "sys", "mqm": mqm or []}  # fmt: skip
    batch = {"task": {"sourceLanguage": "eng", "targetLanguage": "deu"}, "items": [item]}
    return json.dumps([batch], ensure_ascii=False).encode()


def html_campaign(name: str = "H", **fields) -> Campaign:
    items = [{"doc_id": "d1", "seg_id": "1", "src_lang": "en", "tgt_lang": "de",
              "source": SOURCE, "target": TARGET, **fields}]  # fmt: skip
    return create_campaign(name, "esa", items, text_format="html")


# --- import -----------------------------------------------------------------------------------


def test_an_appraise_file_with_markup_imports_as_visible_text_with_its_html_kept():
    # Appraise offsets count UTF-16 code units; in an html campaign, of the visible text:
    # "lief" starts at code point 17, UTF-16 unit 18 (the dog emoji is two units).
    mqm = [{"start_i": 18, "end_i": 22, "severity": "major"}]
    campaign = import_campaign(
        appraise_file(mqm=mqm), name="A", protocol="esa", file_format="appraise",
        text_format="html",
    )  # fmt: skip

    (item,) = campaign.items.all()
    assert campaign.text_format == "html"
    assert (item.source, item.target) == ("The big dog ran away.", VISIBLE)
    assert item.meta["html"] == {
        "source": "The <b>big dog</b> ran away.",
        "target": 'Der <b>große Hund</b> 🐕 <span class="item-hl">lief</span> weg.<br>Ende',
    }
    (span,) = item.prefill_spans
    assert item.target[span["start"] : span["end"]] == "lief"


def test_a_pearmut_file_imports_into_an_html_campaign_from_the_command(tmp_path):
    # Pearmut's end_i is inclusive; "Hund" is visible code points 10..14.
    spans = {"sys": [{"start_i": 10, "end_i": 13, "severity": "minor"}]}
    document = [{"item_id": "s1", "src": SOURCE, "tgt": {"sys": TARGET}, "error_spans": spans}]
    data = {"campaign_id": "c", "info": {"assignment": "single-stream"}, "data": [document]}
    path = tmp_path / "pearmut.json"
    path.write_text(json.dumps(data, ensure_ascii=False))

    call_command("import_campaign", str(path), "--name", "P", "--protocol", "esa",
                 "--text-format", "html", "--src-lang", "en", "--tgt-lang", "de")  # fmt: skip

    (item,) = Campaign.objects.get(name="P").items.all()
    assert item.target == VISIBLE
    assert [item.target[s["start"] : s["end"]] for s in item.prefill_spans] == ["Hund"]
    assert "<b>große Hund</b>" in item.meta["html"]["target"]


def test_jsonl_offsets_of_an_html_campaign_count_the_visible_text():
    campaign = html_campaign(prefill_spans=[{"start": 4, "end": 14, "severity": "minor"}])
    (item,) = campaign.items.all()
    (span,) = item.prefill_spans
    assert item.target[span["start"] : span["end"]] == "große Hund"


def test_an_offset_past_the_visible_text_is_refused_even_if_the_html_is_longer():
    with pytest.raises(CampaignImportError, match=r"0 <= start < end <= 31, got 40..45"):
        html_campaign(prefill_spans=[{"start": 40, "end": 45, "severity": "minor"}])
    assert not Campaign.objects.exists()


def test_a_plain_campaign_keeps_markup_as_text():
    campaign = import_campaign(
        appraise_file(), name="Plain", protocol="esa", file_format="appraise"
    )
    (item,) = campaign.items.all()
    assert campaign.text_format == "plain"
    assert item.target == TARGET
    assert "html" not in item.meta
    assert item.target_html is None


def test_a_google_mqm_file_is_refused_for_an_html_campaign(shared_data):
    data = (shared_data / "formats" / "google-mqm" / "mqm_ted_ende.sample.tsv").read_bytes()
    with pytest.raises(CampaignImportError, match="plain text"):
        import_campaign(
            data, name="G", protocol="mqm", file_format="google-mqm", text_format="html"
        )
    assert not Campaign.objects.exists()


def test_an_unknown_text_format_is_refused_before_reading_the_file():
    with pytest.raises(ValidationError) as caught:
        import_campaign(appraise_file(), name="X", protocol="esa", text_format="rtf")
    assert "text_format" in caught.value.message_dict
    assert not Campaign.objects.exists()


def test_appended_jsonl_items_follow_the_campaign_text_format():
    campaign = html_campaign()
    line = json.dumps({"doc_id": "d2", "seg_id": "1", "source": "<i>s</i>", "target": "<u>t</u>"})
    (added,) = import_items(campaign, line)
    assert (added.source, added.target, added.meta["html"]["target"]) == ("s", "t", "<u>t</u>")


def test_the_import_page_offers_the_text_format(admin_client, tmp_path):
    path = tmp_path / "items.json"
    path.write_bytes(appraise_file())
    with path.open("rb") as upload:
        response = admin_client.post(
            "/annotation/campaigns/new/",
            {"name": "From the page", "protocol": "esa", "file_format": "auto",
             "text_format": "html", "overlap": 1, "status": "open",
             "qualification_min_accuracy": 0.8, "qc_min_pass_rate": 0.8, "qc_min_checks": 1,
             "qc_min_seconds_per_item": 3, "qc_max_fast_fraction": 0.5,
             "claim_ttl_seconds": 1800, "items_file": upload},
        )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    campaign = Campaign.objects.get(name="From the page")
    assert campaign.text_format == "html"
    assert campaign.items.get().target == VISIBLE


# --- the annotate page ------------------------------------------------------------------------


def test_the_annotate_page_renders_the_sanitised_markup_with_the_draft_spans(client):
    campaign = html_campaign()
    item = campaign.items.get()
    annotator = enrolled(campaign, "ann")
    next_item_for(annotator, campaign)
    # A draft span over "große Hund 🐕 lief" crosses the </b> and enters the <span>.
    save_draft(annotator, item, {"spans": [{"start": 4, "end": 21, "severity": "major"}]})
    client.force_login(annotator.user)

    page = client.get(f"/annotation/items/{item_ref(item.pk)}/").content.decode()

    assert "<script>" not in page.split('id="annotate-data"')[0].split("<main")[-1]
    assert "alert(1)" not in page
    assert "onclick" not in page
    assert 'lang="en">The <b>big dog</b> ran away.</div>' in page
    assert (
        'data-html="1">Der <b><mark class="hs-span err-major">große Hund</mark></b>'
        '<mark class="hs-span err-major"> 🐕 </mark><span class="item-hl">'
        '<mark class="hs-span err-major">lief</mark></span> weg.<br>Ende</div>'
    ) in page


def test_a_plain_campaign_page_escapes_markup(client):
    campaign = import_campaign(
        appraise_file(), name="Plain", protocol="esa", file_format="appraise"
    )
    item = campaign.items.get()
    annotator = enrolled(campaign, "ann")
    next_item_for(annotator, campaign)
    client.force_login(annotator.user)

    page = client.get(f"/annotation/items/{item_ref(item.pk)}/").content.decode()

    assert "&lt;b&gt;große Hund&lt;/b&gt;" in page
    assert 'data-html="1"' not in page


def test_markup_edited_out_of_step_with_the_visible_text_is_not_shown(client):
    campaign = html_campaign()
    item = campaign.items.get()
    item.meta["html"]["target"] = "<b>something else</b>"
    item.save()
    assert item.target_html is None


# --- answers and exports ----------------------------------------------------------------------


def test_a_submitted_span_counts_the_visible_text_and_the_export_keeps_the_html():
    campaign = html_campaign()
    item = campaign.items.get()
    annotator = enrolled(campaign, "ann")
    next_item_for(annotator, campaign)
    span = {"start": VISIBLE.index("Hund"), "end": VISIBLE.index("lief") + 4, "severity": "minor"}
    submit_annotation(annotator, item, {"spans": [span], "score": 60})

    answer = Annotation.objects.get().answer
    assert VISIBLE[answer["spans"][0]["start"] : answer["spans"][0]["end"]] == "Hund 🐕 lief"
    (record,) = list(exports.annotation_rows(campaign))
    assert record["tgt"] == VISIBLE
    assert record["meta"]["html"]["target"].startswith("Der <b>große Hund</b>")


def test_the_api_imports_an_html_campaign_and_says_so(admin_user):
    api = APIClient()
    api.force_authenticate(admin_user)
    items = [{"doc_id": "d1", "seg_id": "1", "source": SOURCE, "target": TARGET}]
    response = api.post(
        "/api/campaigns/import/",
        {"name": "API", "protocol": "esa", "items": items,
         "settings": {"text_format": "html", "src_lang": "en", "tgt_lang": "de"}},
        format="json",
    )  # fmt: skip
    assert response.status_code == 201, response.content
    assert response.json()["text_format"] == "html"
    assert Campaign.objects.get(name="API").items.get().target == VISIBLE


def test_the_campaign_page_names_the_text_format(admin_client):
    campaign = html_campaign()
    assert (
        "HTML item text"
        in admin_client.get(f"/annotation/campaigns/{campaign.pk}/").content.decode()
    )
