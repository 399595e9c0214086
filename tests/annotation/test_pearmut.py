"""Pearmut campaign files (Pearmut 1.1's JSON) import as campaign items: one per system and
source item, documents kept, tutorials and attention checks from its ``validation`` rules,
pre-filled spans moved from UTF-16 code units (end inclusive) to code points."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation import formats
from annotation.models import Campaign, Item

pytestmark = pytest.mark.django_db

EXAMPLE = Path(settings.BASE_DIR) / "static" / "annotation" / "examples" / "pearmut-campaign.json"
TICKETS = "Lístky 🎟️ stojí dvacet eur."  # an emoji (two UTF-16 code units) before "dvacet"


def campaign_file(data, *, assignment: str = "single-stream", **sections) -> bytes:
    campaign = {"info": {"assignment": assignment, "protocol": "ESA"}, "campaign_id": "c"}
    return json.dumps({**campaign, "data": data, **sections}, ensure_ascii=False).encode()


def item(item_id: str, tgt: dict[str, str], **fields) -> dict:
    return {"item_id": item_id, "src": f"Source of {item_id}.", "tgt": tgt, **fields}


def import_file(tmp_path, data: bytes, *extra: str, protocol: str = "esa") -> Campaign:
    path = tmp_path / "campaign.json"
    path.write_bytes(data)
    call_command("import_campaign", str(path), "--name", "P", "--protocol", protocol, *extra)
    return Campaign.objects.get(name="P")


def test_the_example_campaign_imports_with_its_tutorial_checks_and_prefilled_spans(tmp_path):
    campaign = import_file(tmp_path, EXAMPLE.read_bytes(), "--src-lang", "en", "--tgt-lang", "cs")

    items = list(campaign.items.order_by("position"))
    assert [(i.kind, i.doc_id, i.seg_id, i.system) for i in items] == [
        ("tutorial", "tutorial_1", "tutorial_1", "tutorial"),
        ("regular", "news-1_#_0", "news-1_#_0", "System-A"),
        ("regular", "news-1_#_0", "news-1_#_0", "System-B"),
        ("regular", "news-1_#_0", "news-1_#_1", "System-A"),
        ("regular", "news-1_#_0", "news-1_#_1", "System-B"),
        ("attention_check", "check_1", "check_1", "check"),
    ]
    tutorial, _, uterka, _, tickets, check = items
    assert tutorial.expected == {
        "score_min": 90,
        "score_max": 100,
        "explanation": "The translation is perfect: score it 90 or more.",
    }
    assert check.expected == {"score_min": 0, "score_max": 20}
    assert tickets.target == TICKETS
    (span,) = tickets.prefill_spans
    assert (span, tickets.target[span["start"] : span["end"]]) == (
        {"start": 16, "end": 22, "severity": "major"},
        "dvacet",
    )
    (span,) = uterka.prefill_spans
    assert uterka.target[span["start"] : span["end"]] == "úterý"
    assert uterka.meta == {"pearmut": {"section": "data", "item_id": "news-1_#_0", "tasks": [1]}}
    assert (tutorial.src_lang, tutorial.tgt_lang) == ("en", "cs")


def test_a_document_in_several_tasks_is_one_item_per_system(tmp_path):
    document = [item("d1-0", {"A": "a0", "B": "b0"}), item("d1-1", {"A": "a1", "B": "b1"})]
    other = [item("d2-0", {"A": "x0", "B": "y0"})]
    data = campaign_file([[document, other], [document]], assignment="task-based")

    campaign = import_file(tmp_path, data, "--format", "pearmut")

    rows = campaign.items.order_by("position").values_list("doc_id", "seg_id", "system", "meta")
    assert [(d, s, sys, m["pearmut"]["tasks"]) for d, s, sys, m in rows] == [
        ("d1-0", "d1-0", "A", [1, 2]),
        ("d1-0", "d1-0", "B", [1, 2]),
        ("d1-0", "d1-1", "A", [1, 2]),
        ("d1-0", "d1-1", "B", [1, 2]),
        ("d2-0", "d2-0", "A", [1]),
        ("d2-0", "d2-0", "B", [1]),
    ]


def test_single_stream_documents_without_ids_are_numbered_and_forms_are_skipped():
    form = [{"text": "What is your native language?", "form": "string"}]
    no_ids = [{"src": "One.", "tgt": {"A": "Jedna."}}, {"src": "Two.", "tgt": {"A": "Dva."}}]
    data = campaign_file([no_ids], data_welcome=[form])

    items = formats.read_items("pearmut", data)

    assert [(i["doc_id"], i["seg_id"], i["target"]) for i in items] == [
        ("data.0.1", "1", "Jedna."),
        ("data.0.1", "2", "Dva."),
    ]


def test_validation_rules_become_expected_answers():
    # Any answer span starting at 9 or 10 and ending at 14 or 15 passes in Pearmut: all of
    # them cover "kočky" (10..15), which an answer must overlap here.
    spans = [{"start_i": [9, 10], "end_i": [14, 15], "severity": "major"}]
    rules = {
        "A": {"warning": "Mark the wrong word.", "error_spans": spans, "score": [20, 60]},
        "B": [{"score": [70, 100]}, {"score": [60, 90], "error_spans": []}],
        "C": {"score_greaterthan": "A"},
    }
    tgt = {"A": "Dnes prší kočky a psi.", "B": "Dnes hodně prší.", "C": "Dnes leje."}
    data = campaign_file([[item("t1", tgt, validation=rules, skippable=True)]])

    a, b, c = formats.read_items("pearmut", data)

    assert (a["kind"], a["expected"]) == (
        "tutorial",
        {
            "score_min": 20,
            "score_max": 60,
            "spans": [{"start": 10, "end": 15}],
            "explanation": "Mark the wrong word.",
        },
    )
    assert a["target"][10:15] == "kočky"
    assert b["expected"] == {"score_min": 70, "score_max": 90, "no_spans": True}
    assert "kind" not in c and c["meta"]["pearmut"]["validation"] == {"score_greaterthan": "A"}


def test_a_span_on_the_missing_token_is_an_omission():
    # Pearmut shows "[missing]" after the target, at the target's UTF-16 length (30 here).
    missing = {"start_i": 30, "end_i": 30, "severity": "major", "category": "Accuracy/Omission"}
    data = campaign_file([[item("a", {"A": TICKETS + "🎟"}, error_spans={"A": [missing]})]])

    (read,) = formats.read_items("pearmut", data)

    assert read["prefill_spans"] == [
        {
            "start": 28,
            "end": 28,
            "missing": True,
            "severity": "major",
            "category": "Accuracy",
            "subcategory": "Omission",
        }
    ]


def test_a_span_on_another_special_token_or_an_unknown_system_is_refused():
    custom = {"assignment": "single-stream", "special_tokens": ["[missing]", "[untranslated]"]}
    token = {"start_i": 3, "end_i": 3, "severity": "minor"}  # "ab", [missing], [untranslated]
    data = json.loads(campaign_file([[item("a", {"A": "ab"}, error_spans={"A": [token]})]]))
    data["info"] = custom
    with pytest.raises(formats.FormatError, match="not '\\[untranslated\\]'"):
        formats.read_items("pearmut", json.dumps(data).encode())

    data = campaign_file([[item("a", {"A": "ab"}, validation={"Z": {"score": [0, 10]}})]])
    with pytest.raises(formats.FormatError, match="validation names systems with no translation"):
        formats.read_items("pearmut", data)


def test_a_pearmut_file_under_another_format_is_refused_with_its_name(tmp_path):
    path = tmp_path / "campaign.json"
    path.write_bytes(EXAMPLE.read_bytes())

    for wrong in ("jsonl", "appraise", "google-mqm"):
        with pytest.raises(CommandError) as caught:
            call_command(
                "import_campaign", str(path), "--name", "X", "--protocol", "esa", "--format", wrong
            )
        assert (
            f"{path}: this looks like a Pearmut campaign file; import it with the format "
            "'pearmut'" in str(caught.value)
        )
    assert not Campaign.objects.exists()


def test_another_format_under_pearmut_is_refused_with_its_name(tmp_path):
    path = tmp_path / "batches.json"
    appraise = Path(settings.BASE_DIR) / "static/annotation/examples/appraise-batches.json"
    path.write_bytes(appraise.read_bytes())

    with pytest.raises(CommandError, match="this looks like an Appraise batches file"):
        call_command(
            "import_campaign", str(path), "--name", "X", "--protocol", "esa", "--format", "pearmut"
        )
    assert not Campaign.objects.exists()


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            [item("a", {"A": "x"}), {"item_id": "b", "src": "s"}],
            "data, document 1, item 2: tgt must be an object from system names to translations",
        ),
        (
            [{"tgt": {"A": "x"}}],
            "data, document 1, item 1: the platform needs a source: src must be a non-empty",
        ),
        (
            # start_i 8 is the second half of the emoji: no code point starts there.
            [item("a", {"A": TICKETS}, error_spans={"A": [{"start_i": 8, "end_i": 9}]})],
            "data, document 1, item 1, system 'A', error_spans[1]: UTF-16 offset 8 falls inside "
            "the character '🎟' at 7",
        ),
    ],
)
def test_a_broken_item_names_its_place_and_nothing_is_written(tmp_path, document, message):
    with pytest.raises(CommandError) as caught:
        import_file(tmp_path, campaign_file([document]))

    assert message in str(caught.value)
    assert not Campaign.objects.exists()


def test_a_file_of_several_campaigns_is_refused(tmp_path):
    one = json.loads(campaign_file([[item("a", {"A": "x"})]]))

    with pytest.raises(formats.FormatError, match="holds 2 campaigns; import them one at a time"):
        formats.read_items("pearmut", json.dumps([one, one]).encode())
    assert len(formats.read_items("pearmut", json.dumps([one]).encode())) == 1


def test_the_api_and_the_page_take_a_pearmut_file(admin_user, admin_client):
    client = APIClient()
    client.force_authenticate(admin_user)
    with EXAMPLE.open("rb") as upload:
        response = client.post(
            "/api/campaigns/import/",
            {"name": "API", "protocol": "esa", "format": "pearmut", "file": upload},
            format="multipart",
        )
    assert response.status_code == 201, response.json()

    with EXAMPLE.open("rb") as upload:
        page = admin_client.post(
            "/annotation/campaigns/new/",
            {
                "name": "Page",
                "protocol": "esa",
                "file_format": "auto",
                "src_lang": "en",
                "tgt_lang": "cs",
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
    assert page.status_code == 302, page.content.decode()[:2000]
    counts = Counter(Item.objects.values_list("campaign__name", "kind"))
    assert counts == {
        ("API", "regular"): 4,
        ("API", "tutorial"): 1,
        ("API", "attention_check"): 1,
        ("Page", "regular"): 4,
        ("Page", "tutorial"): 1,
        ("Page", "attention_check"): 1,
    }
