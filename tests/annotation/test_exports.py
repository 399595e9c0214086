"""Exports: golden files, pseudonyms only, constant queries, command and download view."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import exports
from annotation.models import Annotation, Campaign
from tests.annotation.campaign_builders import (
    choice_answer,
    choice_campaign,
    esa_answer,
    esa_campaign,
    make_annotator,
    mqm_campaign,
    work,
)

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8", newline="")
    assert text == path.read_text(encoding="utf-8"), f"export differs from {path}"


def export(campaign: Campaign, fmt: str, aggregate: bool = False, **kwargs) -> str:
    return "".join(exports.stream_export(campaign, fmt, aggregate=aggregate, **kwargs))


ESA_SCORES = {"alice": [90, 50, 20], "bob": [80, 60, 10]}
MINOR_SPAN = {"start": 0, "end": 5, "severity": "minor"}


def missing_at_end(target: str) -> dict:
    return {"start": len(target), "end": len(target), "missing": True, "severity": "major"}


def build_esa() -> Campaign:
    campaign = esa_campaign()
    for name, scores in ESA_SCORES.items():
        queue = iter(scores)

        def answer(item, queue=queue):
            spans = []
            if item.doc_id == "doc-a":
                spans = [MINOR_SPAN] if item.seg_id == "1" else [missing_at_end(item.target)]
            return esa_answer(next(queue), spans)

        work(make_annotator(name), campaign, answer)
    return campaign


def mqm_span(start, end, category, subcategory, severity, **extra):
    return {"start": start, "end": end, "category": category, "subcategory": subcategory,
            "severity": severity, **extra}  # fmt: skip


MQM_ANSWERS = {
    # "Das rote Auto.": one major mistranslation of "rote", a minor punctuation on ".".
    ("doc-a", "1"): {"spans": [mqm_span(4, 8, "Accuracy", "Mistranslation", "major"),
                               mqm_span(13, 14, "Fluency", "Punctuation", "minor")]},
    ("doc-a", "2"): {"spans": [], "no_errors": True},
    ("doc-b", "7"): {"spans": [mqm_span(0, 6, "Non-translation", "", "major")]},
    ("doc-b", "8"): {"spans": [mqm_span(12, 12, "Accuracy", "Omission", "major", missing=True)]},
}  # fmt: skip


def build_mqm() -> Campaign:
    campaign = mqm_campaign()
    work(make_annotator("alice"), campaign, lambda item: MQM_ANSWERS[(item.doc_id, item.seg_id)])
    return campaign


CHOICES = {  # per annotator, per item (in order): option indices into yes / no / maybe
    "alice": [0, 0, 0, 1],
    "bob": [0, 1, 1, 1],
    "carol": [0, 0, 2, 2],
}


def build_choice() -> Campaign:
    campaign = choice_campaign()
    for name, picks in CHOICES.items():
        queue = iter(picks)
        work(make_annotator(name), campaign, lambda item, q=queue: choice_answer(next(q)))
    return campaign


# --- golden files ----------------------------------------------------------------------------
# reset_sequences: item ids start at 1 on SQLite and PostgreSQL alike, so the files match both.


@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_esa_golden_files():
    campaign = build_esa()
    assert_golden("esa_annotations.jsonl", export(campaign, "jsonl"))
    assert_golden("esa_annotations.csv", export(campaign, "csv"))
    assert_golden("esa_items.jsonl", export(campaign, "jsonl", aggregate=True))
    assert_golden("esa_items.csv", export(campaign, "csv", aggregate=True))


@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_mqm_golden_files():
    campaign = build_mqm()
    assert_golden("mqm_google.tsv", export(campaign, "mqm-tsv"))
    assert_golden("mqm_annotations.jsonl", export(campaign, "jsonl"))
    assert_golden("mqm_items.csv", export(campaign, "csv", aggregate=True))


@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_choice_golden_files():
    campaign = build_choice()
    assert_golden("choice_annotations.csv", export(campaign, "csv"))
    assert_golden("choice_items.jsonl", export(campaign, "jsonl", aggregate=True))


# --- content ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_esa_jsonl_uses_wmt_keys_and_hand_checked_values():
    campaign = build_esa()
    rows = [json.loads(line) for line in export(campaign, "jsonl").splitlines()]
    assert len(rows) == 6
    first = rows[0]
    assert first["langs"] == "en-cs"
    assert (first["src"], first["tgt"], first["annotator"]) == (
        "The cat sat.",
        "Kočka seděla.",
        "ann-alice",
    )
    assert first["esa_score"] == 90.0
    assert first["esa_spans"] == [{"start_i": 0, "end_i": 5, "severity": "minor"}]
    assert rows[1]["esa_spans"] == [{"start_i": "missing", "end_i": "missing", "severity": "major"}]
    assert first["qc"] == {"verdict": "pass", "too_fast": False, "check": None}
    assert (first["origin"], first["origin_ref"], first["meta"]) == (
        "search",
        "run-1/1",
        {"topic": "pets"},
    )
    assert first["time_spent_seconds"] == 12.0


@pytest.mark.django_db
def test_esa_aggregate_mean_and_std_by_hand():
    campaign = build_esa()
    rows = [json.loads(line) for line in export(campaign, "jsonl", aggregate=True).splitlines()]
    # Item 1: alice 90, bob 80 → mean 85, population std 5.
    assert [(r["mean_score"], r["score_std"], r["n_annotations"]) for r in rows] == [
        (85.0, 5.0, 2), (55.0, 5.0, 2), (15.0, 5.0, 2),
    ]  # fmt: skip
    assert rows[0]["annotators"] == ["ann-alice", "ann-bob"]


@pytest.mark.django_db
def test_mqm_tsv_rows_match_google_format():
    campaign = build_mqm()
    lines = export(campaign, "mqm-tsv").splitlines()
    assert lines[0].split("\t") == list(exports.MQM_TSV_COLUMNS)
    rows = [line.split("\t") for line in lines[1:]]
    assert all(len(row) == 10 for row in rows)
    # One row per span; a "No-error" row for the annotation without spans.
    assert [(r[7], r[8]) for r in rows] == [
        ("Accuracy/Mistranslation", "Major"),
        ("Fluency/Punctuation", "Minor"),
        ("No-error", "No-error"),
        ("Non-translation!", "Major"),
        ("Accuracy/Omission", "Major"),
    ]
    assert rows[0][6] == "Das <v>rote</v> Auto."
    assert rows[1][6] == "Das rote Auto<v>.</v>"
    # Google's doc_id: the segment's place within its document (doc-a 1, 2; doc-b 7, 8 → 1, 2).
    assert [(r[1], r[2], r[3]) for r in rows] == [
        ("doc-a", "1", "1"), ("doc-a", "1", "1"), ("doc-a", "2", "2"),
        ("doc-b", "1", "7"), ("doc-b", "2", "8"),
    ]  # fmt: skip
    assert {r[4] for r in rows} == {"ann-alice"}


@pytest.mark.django_db
def test_mqm_scores_recomputed_with_the_campaign_weights():
    campaign = build_mqm()
    rows = [json.loads(line) for line in export(campaign, "jsonl").splitlines()]
    # 5 + 0.1 = 5.1 → 100 − 4·5.1 = 79.6; no error → 100; non-translation 25 → 0; omission 5 → 80.
    assert [(r["mqm_score"], r["score"]) for r in rows] == [
        (5.1, 79.6), (0.0, 100.0), (25.0, 0.0), (5.0, 80.0),
    ]  # fmt: skip
    campaign.mqm_weights = {"major": 10}
    campaign.save()
    rows = [json.loads(line) for line in export(campaign, "jsonl").splitlines()]
    assert rows[0]["mqm_score"] == 10.1


@pytest.mark.django_db
def test_choice_aggregate_majority_tie_and_agreement():
    campaign = build_choice()
    rows = [json.loads(line) for line in export(campaign, "jsonl", aggregate=True).splitlines()]
    assert [(r["majority"], r["majority_votes"], r["tie"]) for r in rows] == [
        ("yes", 3, False), ("yes", 2, False), ("tie", 1, True), ("no", 2, False),
    ]  # fmt: skip
    # Pairwise agreement per item (Fleiss' P_i): 3/3 pairs, 1/3, 0/3, 1/3.
    assert [r["item_agreement"] for r in rows] == [1.0, pytest.approx(1 / 3, abs=1e-6), 0.0,
                                                   pytest.approx(1 / 3, abs=1e-6)]  # fmt: skip


@pytest.mark.django_db
def test_choice_rows_map_indices_to_option_labels():
    campaign = build_choice()
    rows = [json.loads(line) for line in export(campaign, "jsonl").splitlines()]
    assert rows[0]["selected"] == ["yes"] and rows[0]["selected_indices"] == [0]
    assert sorted(rows[0]["option_order"]) == ["maybe", "no", "yes"]


@pytest.mark.django_db
def test_exports_contain_pseudonyms_only():
    campaigns = [build_esa(), build_mqm()]
    outputs = []
    for campaign in campaigns:
        for fmt in exports.FORMATS:
            if fmt == "mqm-tsv" and campaign.protocol != "mqm":
                continue
            outputs.append(export(campaign, fmt))
            if fmt not in ("mqm-tsv", exports.ITEMS_FORMAT):
                outputs.append(export(campaign, fmt, aggregate=True))
    text = "\n".join(outputs)
    assert "ann-alice" in text and "ann-bob" in text
    for secret in ("Secret", "Realname", "private@example.org", "user-alice", "user-bob"):
        assert secret not in text


@pytest.mark.django_db
def test_drafts_are_not_exported():
    campaign = esa_campaign()
    alice = make_annotator("alice")
    work(
        alice,
        campaign,
        lambda item: esa_answer(70) if item.seg_id == "1" and item.doc_id == "doc-a" else None,
    )
    assert Annotation.objects.filter(campaign=campaign, status="draft").count() == 1
    assert len(export(campaign, "jsonl").splitlines()) == 1


@pytest.mark.parametrize(
    ("fmt", "aggregate", "message"),
    [("xml", False, "unknown format"), ("mqm-tsv", False, "MQM campaigns only"),
     ("mqm-tsv", True, "cannot be aggregated")],
)  # fmt: skip
@pytest.mark.django_db
def test_bad_export_requests(fmt, aggregate, message):
    campaign = esa_campaign()
    with pytest.raises(exports.ExportError, match=message):
        exports.stream_export(campaign, fmt, aggregate=aggregate)


# --- streaming: constant queries, iterator ---------------------------------------------------


def count_queries(campaign, fmt, aggregate=False) -> int:
    with CaptureQueriesContext(connection) as ctx:
        export(campaign, fmt, aggregate)
    return len(ctx.captured_queries)


@pytest.mark.django_db
@pytest.mark.parametrize(("fmt", "aggregate"), [("jsonl", False), ("csv", False), ("csv", True)])
def test_query_count_does_not_grow_with_annotations(fmt, aggregate):
    small = esa_campaign("small", overlap=1)
    work(make_annotator("alice"), small, lambda item: esa_answer(80))
    large = esa_campaign("large", overlap=3)
    for name in ("bob", "carol", "dave"):
        work(make_annotator(name), large, lambda item: esa_answer(70))
    assert (
        Annotation.objects.filter(campaign=large).count()
        == 3 * Annotation.objects.filter(campaign=small).count()
    )
    # QC verdicts (every export: per-item rows count only annotators who pass) cost 1 query per
    # annotator, whatever their amount of work; subtract them, the rest must be identical.
    per_annotator = 1
    small_q = count_queries(small, fmt, aggregate) - per_annotator * 1
    large_q = count_queries(large, fmt, aggregate) - per_annotator * 3
    assert small_q == large_q


@pytest.mark.django_db
def test_mqm_tsv_query_count_is_constant():
    small = build_mqm()
    assert count_queries(small, "mqm-tsv") == 2  # document numbers + one streamed query


@pytest.mark.django_db
def test_exports_stream_through_iterator(monkeypatch):
    """Rows come from QuerySet.iterator (server-side cursor), never a list of the campaign."""
    from django.db.models.query import QuerySet

    calls = []
    original = QuerySet.iterator

    def spy(self, chunk_size=None):
        calls.append(chunk_size)
        return original(self, chunk_size=chunk_size)

    monkeypatch.setattr(QuerySet, "iterator", spy)
    campaign = build_esa()
    chunks = exports.stream_export(campaign, "jsonl", chunk_size=2)
    assert calls == []  # nothing read before the first chunk is asked for
    assert len(list(chunks)) == 6
    assert 2 in calls
    calls.clear()
    export(campaign, "csv", aggregate=True, chunk_size=2)
    assert 2 in calls


# --- command and download --------------------------------------------------------------------


@pytest.mark.django_db
def test_export_command_writes_the_file(tmp_path):
    campaign = build_esa()
    out = tmp_path / "esa.jsonl"
    call_command("export_campaign", campaign.name, "--format", "jsonl", "--output", str(out))
    assert out.read_text(encoding="utf-8") == export(campaign, "jsonl")
    assert not (tmp_path / "esa.jsonl.partial").exists()
    agg = tmp_path / "esa.csv"
    call_command(
        "export_campaign", campaign.name, "--format", "csv", "--aggregate", "--output", str(agg)
    )
    assert len(agg.read_text(encoding="utf-8").splitlines()) == 4


@pytest.mark.django_db
def test_export_command_errors(tmp_path):
    build_esa()
    with pytest.raises(CommandError, match="no campaign named"):
        call_command("export_campaign", "nope", "--output", str(tmp_path / "x"))
    with pytest.raises(CommandError, match="MQM campaigns only"):
        call_command(
            "export_campaign", "ESA demo", "--format", "mqm-tsv", "--output", str(tmp_path / "x")
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.django_db
def test_download_streams_for_admin(admin_client):
    campaign = build_mqm()
    url = reverse("annotation:export_download", args=[campaign.pk])
    response = admin_client.get(url, {"format": "mqm-tsv"})
    assert response.status_code == 200
    assert response.streaming
    assert (
        response["Content-Disposition"] == f'attachment; filename="{campaign.slug}-annotations.tsv"'
    )
    body = b"".join(response.streaming_content).decode()
    assert body == export(campaign, "mqm-tsv")
    bad = admin_client.get(url, {"format": "mqm-tsv", "aggregate": "1"})
    assert bad.status_code == 400


@pytest.mark.django_db
def test_download_is_404_for_annotators_and_outsiders(client, annotator_user, outsider_user):
    campaign = build_esa()
    alice = campaign.enrollments.select_related("annotator__user").first().annotator.user
    url = reverse("annotation:export_download", args=[campaign.pk])
    for user in (alice, annotator_user, outsider_user):
        client.force_login(user)
        assert client.get(url, {"format": "jsonl"}).status_code == 404
    client.logout()
    assert client.get(url).status_code == 302  # to the login page


@pytest.mark.django_db
def test_csv_cells_never_run_as_spreadsheet_formulas():
    from annotation.services.campaigns import create_campaign

    items = [{"source": '=HYPERLINK("http://evil.example")', "question": "@who?",
              "choices": ["-rm", "b"], "meta": {"note": "-3"}}]  # fmt: skip
    campaign = create_campaign("Formulas", "choice", items, overlap=1)
    work(make_annotator("formula"), campaign, lambda item: choice_answer(0))
    rows = list(csv.DictReader(io.StringIO(export(campaign, "csv"))))
    assert rows[0]["source"] == '\'=HYPERLINK("http://evil.example")'
    assert rows[0]["question"] == "'@who?"
    assert rows[0]["selected"] == "'-rm"
    aggregate = list(csv.DictReader(io.StringIO(export(campaign, "csv", aggregate=True))))
    assert aggregate[0]["source"].startswith("'=")
    # JSONL keeps the text exactly: only spreadsheets need the quote.
    assert json.loads(export(campaign, "jsonl").splitlines()[0])["src"].startswith("=HYPERLINK")


INJECTED = "fine\r@SUM(1+1)*cmd|' /C calc'!A0"


@pytest.mark.django_db
def test_a_line_break_in_a_csv_cell_is_quoted_and_starts_no_row():
    campaign = choice_campaign()
    comment = {"selected": [0], "confidence": 4, "comment": INJECTED}
    work(make_annotator("cr"), campaign, lambda item: comment)

    text = export(campaign, "csv")

    # The "\r" is inside a quoted cell, so no row of the file starts with the formula.
    assert f',"{INJECTED}",' in text
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert len(rows) == 4  # one row per item, none split
    assert {row["comment"] for row in rows} == {INJECTED}


@pytest.mark.django_db
def test_mqm_tsv_cells_never_run_as_spreadsheet_formulas():
    campaign = mqm_campaign(name="=HYPERLINK(1)")
    span = mqm_span(0, 3, "Accuracy", "Mistranslation", "major", comment=INJECTED)
    work(make_annotator("tsv"), campaign, lambda item: {"spans": [span]})
    campaign.items.filter(seg_id="1").update(source="-cmd|' /C calc'!A0", system="@sys")

    lines = export(campaign, "mqm-tsv").split("\n")

    assert len(lines) == 6 and lines[-1] == ""  # header, four rows, final newline
    first = lines[1].split("\t")
    assert first[0] == "'@sys"
    assert first[5] == "'-cmd|' /C calc'!A0"
    assert first[9] == "fine @SUM(1+1)*cmd|' /C calc'!A0"
    assert all(line.split("\t")[9] == first[9] for line in lines[1:5])
