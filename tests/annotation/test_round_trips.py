"""Round trips: what an export writes reads back through the matching importer unchanged.

* items JSONL → the campaign import: the same items;
* Google MQM TSV → ``google_mqm.read_tsv`` and the google-mqm campaign import: the same items,
  each annotation's spans (source-side ones included) and the same MQM penalties;
* Google's labels (``Style/Awkward``, ``Source error``, ``Neutral``...) in answers and imports.

The ESA JSONL and difficulty datasets round trips are in ``tests/difficulty``.
"""

from __future__ import annotations

import json

import pytest

from annotation import protocols, scoring
from annotation.exports import ExportError
from annotation.formats import google_mqm
from annotation.models import Annotation, Campaign
from annotation.services.campaigns import add_items, create_campaign, import_campaign
from tests.annotation.campaign_builders import (
    choice_campaign,
    esa_answer,
    make_annotator,
    mqm_campaign,
    work,
)
from tests.annotation.test_exports import assert_golden, export

ITEM_FIELDS = (
    "doc_id", "seg_id", "src_lang", "tgt_lang", "source", "target", "system", "kind",
    "expected", "question", "choices", "prefill_spans", "origin", "origin_ref", "meta",
)  # fmt: skip


def items_of(campaign: Campaign) -> list[dict]:
    return [
        {field: getattr(item, field) for field in ITEM_FIELDS}
        for item in campaign.items.order_by("position", "id")
    ]


def rich_esa_campaign() -> Campaign:
    """Every item field an ESA campaign can hold: WMT ids in meta, pre-filled spans, a tutorial
    and an attention check with their expected answers."""
    items = [
        {"doc_id": "news-1", "seg_id": "1", "source": "The cat sat.", "target": "Kočka seděla.",
         "system": "sysA", "origin": "search", "origin_ref": "run-1/1",
         "meta": {"line_id": 17, "domain": "news"},
         "prefill_spans": [{"start": 0, "end": 5, "severity": "Minor"}]},
        {"doc_id": "news-1", "seg_id": "2", "source": "It rained.", "target": "Pršelo.",
         "system": "sysB", "tgt_lang": "sk"},
        {"doc_id": "tut", "seg_id": "1", "source": "Hello.", "target": "Sbohem.",
         "kind": "tutorial", "expected": {"spans": [{"start": 0, "end": 7}], "score_max": 40,
                                          "explanation": "Goodbye is not hello."}},
        {"doc_id": "chk", "seg_id": "1", "source": "Yes.", "target": "Ne.",
         "kind": "attention_check", "expected": {"score_max": 50}},
    ]  # fmt: skip
    return create_campaign("Rich ESA", "esa", items, src_lang="en", tgt_lang="cs")


@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_items_jsonl_golden_file():
    assert_golden("esa_campaign_items.jsonl", export(rich_esa_campaign(), "items-jsonl"))


@pytest.mark.django_db
@pytest.mark.parametrize("build", [rich_esa_campaign, mqm_campaign, choice_campaign])
def test_items_jsonl_imports_back_to_the_same_items(build):
    campaign = build()
    copy = import_campaign(
        export(campaign, "items-jsonl"),
        name=f"{campaign.name} copy",
        protocol=campaign.protocol,
        src_lang=campaign.src_lang,
        tgt_lang=campaign.tgt_lang,
    )
    assert items_of(copy) == items_of(campaign)
    assert len(items_of(copy)) == campaign.items.count()


@pytest.mark.django_db
def test_generated_checks_stay_out_of_the_items_file():
    campaign = rich_esa_campaign()
    first = campaign.items.order_by("position").first()
    assert first is not None
    # What generate_attention_checks writes: a corrupted copy naming its original by id.
    add_items(campaign, [{
        "doc_id": first.doc_id, "seg_id": first.seg_id, "source": first.source,
        "target": "Pes seděla.", "kind": "attention_check",
        "expected": {"type": "corrupted", "original_item_id": first.pk,
                     "spans": [{"start": 0, "end": 3}]},
    }])  # fmt: skip
    text = export(campaign, "items-jsonl")
    assert len(text.splitlines()) == campaign.items.count() - 1
    assert '"corrupted"' not in text


@pytest.mark.django_db
def test_items_jsonl_has_no_aggregate():
    with pytest.raises(ExportError, match="no aggregate"):
        export(mqm_campaign(), "items-jsonl", aggregate=True)


# --- Google MQM TSV --------------------------------------------------------------------------


def mqm_span(start, end, category, severity, subcategory="", **extra):
    return {"start": start, "end": end, "category": category, "subcategory": subcategory,
            "severity": severity, **extra}  # fmt: skip


def google_campaign() -> Campaign:
    items = [
        {"doc_id": "talk-1", "seg_id": "1", "source": "The red car.", "target": "Das rote Auto.",
         "system": "sysA"},
        {"doc_id": "talk-1", "seg_id": "2", "source": "Good morning, my friend.",
         "target": "Guten Morgen.", "system": "sysA"},
        {"doc_id": "talk-2", "seg_id": "1", "source": "Stop!", "target": "Stopp!",
         "system": "sysB"},
    ]  # fmt: skip
    return create_campaign(
        "Google round trip", "mqm", items, src_lang="en", tgt_lang="de", overlap=2
    )


# Answers as an API client writing Google's labels would send them (spelling, capitals).
GOOGLE_ANSWERS = {
    "alice": {
        "1": {"spans": [mqm_span(4, 8, "Style/Awkward", "Minor"),
                        mqm_span(13, 14, "Fluency", "minor", "Punctuation")]},
        # "my friend" left out: an omission marked in the source, as Google's raters do.
        "2": {"spans": [mqm_span(13, 23, "Accuracy/Omission", "Major", side="source"),
                        mqm_span(0, 6, "Terminology/Inconsistent use of terminology",
                                 "Neutral")]},
        "talk-2": {"spans": [], "no_errors": True},
    },
    "bob": {
        "1": {"spans": [mqm_span(14, 14, "Accuracy", "major", "Omission", missing=True)]},
        "2": {"spans": [mqm_span(0, 4, "Source error", "minor", side="source",
                                 comment="capital G")]},
        "talk-2": {"spans": [mqm_span(0, 6, "Non-translation!", "major")]},
    },
}  # fmt: skip


def build_google() -> Campaign:
    campaign = google_campaign()
    for name, answers in GOOGLE_ANSWERS.items():
        work(
            make_annotator(name),
            campaign,
            lambda item, a=answers: a["talk-2" if item.doc_id == "talk-2" else item.seg_id],
        )
    return campaign


@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_mqm_tsv_golden_file_with_source_side_spans_and_google_labels():
    assert_golden("mqm_google_round_trip.tsv", export(build_google(), "mqm-tsv"))


@pytest.mark.django_db
def test_google_labels_are_stored_in_the_typology_spelling():
    campaign = build_google()
    alice = Annotation.objects.get(annotator__pseudonym="ann-alice", item__seg_id="2",
                                   item__doc_id="talk-1")  # fmt: skip
    assert alice.answer["spans"] == [
        {"start": 13, "end": 23, "side": "source", "severity": "major",
         "category": "Accuracy", "subcategory": "Omission"},
        {"start": 0, "end": 6, "severity": "neutral", "category": "Terminology",
         "subcategory": "Inconsistent use"},
    ]  # fmt: skip
    assert alice.mqm_score == 5.0  # the omission; Neutral costs nothing
    bob = Annotation.objects.get(annotator__pseudonym="ann-bob", item__seg_id="2",
                                 item__doc_id="talk-1")  # fmt: skip
    assert bob.answer["spans"][0]["category"] == scoring.SOURCE_ERROR
    assert bob.mqm_score == 0.0 and bob.score == 100.0  # a source error is not the MT's fault
    assert campaign.items.count() == 3


@pytest.mark.django_db
def test_mqm_tsv_reads_back_to_the_same_spans_penalties_and_items():
    campaign = build_google()
    tsv = export(campaign, "mqm-tsv").encode()
    segments = google_mqm.read_tsv(tsv)
    assert [(s.doc, s.position, s.seg_id) for s in segments] == [
        ("talk-1", 1, "1"), ("talk-1", 2, "2"), ("talk-2", 1, "1"),
    ]  # fmt: skip
    for segment in segments:
        item = campaign.items.get(doc_id=segment.doc, seg_id=segment.seg_id)
        assert (segment.source, segment.target, segment.system) == (
            item.source,
            item.target,
            item.system,
        )
        penalties = google_mqm.rater_penalties(segment)
        for rater, errors in segment.errors.items():
            annotation = Annotation.objects.get(item=item, annotator__pseudonym=rater)
            assert google_mqm.answer_spans(errors, item.target) == annotation.answer["spans"]
            assert penalties[rater] == annotation.mqm_score
    copy = import_campaign(
        tsv, name="Copy", protocol="mqm", file_format="google-mqm", src_lang="en", tgt_lang="de"
    )
    fields = ("doc_id", "seg_id", "source", "target", "system")
    assert [[row[f] for f in fields] for row in items_of(copy)] == [
        [row[f] for f in fields] for row in items_of(campaign)
    ]
    assert [item.meta["doc_position"] for item in copy.items.order_by("position")] == [1, 2, 1]


@pytest.mark.django_db
def test_google_positions_survive_a_second_export(shared_data):
    """A campaign imported from Google's file exports the file's doc_id again, even where the
    file is a sample that does not start at a talk's first segment."""
    data = (shared_data / "formats" / "google-mqm" / "mqm_ted_ende.sample.tsv").read_bytes()
    campaign = import_campaign(
        data, name="TED", protocol="mqm", file_format="google-mqm", src_lang="en", tgt_lang="de"
    )
    item = campaign.items.order_by("position").first()
    assert item is not None and item.meta["doc_position"] == 1
    item.meta["doc_position"] = 40  # as a later part of a talk would have
    item.save()
    rater = make_annotator("carol")
    work(rater, campaign, lambda i: {"spans": [], "no_errors": True} if i.pk == item.pk else None)
    rows = [line.split("\t") for line in export(campaign, "mqm-tsv").splitlines()[1:]]
    assert [row[2] for row in rows if row[3] == item.seg_id and row[0] == item.system] == ["40"]


# --- source-side spans and Google's labels in answers ------------------------------------------


def clean_mqm(spans, protocol="mqm"):
    return protocols.clean_answer(
        protocol,
        {"spans": spans, "score": 50, "confirmed_low_score": True},
        target="Guten Morgen.",
        source="Good morning, my friend.",
        severities=("minor", "major"),
    )


def test_source_side_spans_are_checked_against_the_source():
    ok = mqm_span(13, 23, "Accuracy", "major", "Omission", side="source")
    assert clean_mqm([ok])[1] == []
    _, errors, _ = clean_mqm([{**ok, "end": 30}])
    assert errors == ["spans[1]: need 0 <= start < end <= 24, got 13..30"]
    _, errors, _ = clean_mqm([{**ok, "side": "middle"}])
    assert errors == ["spans[1]: side must be 'source' or 'target', got 'middle'"]
    _, errors, _ = clean_mqm([{**ok, "start": 24, "end": 24, "missing": True}])
    assert errors == ["spans[1]: a [MISSING] span is on the target side"]
    # The hybrid shares MQM's spans; ESA marks the target only.
    assert clean_mqm([ok], "esa_mqm")[1] == []
    _, errors, _ = clean_mqm([{"start": 0, "end": 4, "severity": "minor", "side": "source"}], "esa")
    assert errors == ["spans[1]: side must be 'target', got 'source'"]


def test_google_labels_are_aliases_in_answers():
    cleaned, errors, missing = clean_mqm(
        [mqm_span(0, 5, "Style", "Major", "Awkward"),
         mqm_span(6, 12, "Terminology/Inconsistent use of terminology", "minor"),
         mqm_span(0, 4, "Source error", "Neutral", side="source")]
    )  # fmt: skip
    assert (errors, missing) == ([], [])
    assert [(s["category"], s["subcategory"], s["severity"]) for s in cleaned["spans"]] == [
        ("Style", "Unnatural or awkward", "major"),
        ("Terminology", "Inconsistent use", "minor"),
        ("Source error", "", "neutral"),
    ]
    assert scoring.mqm_score(cleaned["spans"]) == 6.0
    _, errors, _ = clean_mqm([mqm_span(0, 5, "Style", "minor", "Clumsy")])
    assert errors == ["span 1: unknown subcategory 'Clumsy' for MQM category 'Style'"]
    # Neutral is Google's, not an ESA severity.
    _, errors, _ = clean_mqm([{"start": 0, "end": 5, "severity": "neutral"}], "esa")
    assert errors == ["span 1: severity must be one of minor, major"]


def test_google_severities_in_imported_prefill_spans():
    item = protocols.normalize_item(
        "mqm",
        {"doc_id": "d", "seg_id": "1", "source": "Hi.", "target": "Hallo.",
         "prefill_spans": [{"start": 0, "end": 5, "severity": "Neutral", "category": "Other"},
                           {"start": 0, "end": 5, "severity": "Major"}]},
    )  # fmt: skip
    assert [s["severity"] for s in item["prefill_spans"]] == ["neutral", "major"]
    with pytest.raises(protocols.ItemError, match="unknown severity 'neutral'"):
        protocols.normalize_item(
            "esa",
            {"doc_id": "d", "seg_id": "1", "source": "Hi.", "target": "Hallo.",
             "prefill_spans": [{"start": 0, "end": 5, "severity": "neutral"}]},
        )  # fmt: skip


@pytest.mark.django_db
def test_esa_jsonl_carries_wmt_line_id_and_domain():
    campaign = rich_esa_campaign()
    work(make_annotator("alice"), campaign, lambda item: esa_answer(70))
    rows = [json.loads(line) for line in export(campaign, "jsonl").splitlines()]
    first = next(row for row in rows if row["seg_id"] == "1" and row["doc_id"] == "news-1")
    assert (first["line_id"], first["domain"]) == (17, "news")
    assert list(first)[:9] == [
        "campaign", "protocol", "item_id", "kind", "langs", "src_lang", "tgt_lang", "doc_id",
        "seg_id",
    ]  # fmt: skip
    other = next(row for row in rows if row["seg_id"] == "2")
    assert "line_id" not in other and "domain" not in other
