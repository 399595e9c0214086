"""The ESA+MQM hybrid, the non-scorable flag of scored protocols and the translation task:
cleaning, import, the annotate page (HTTP), results for producers and exports."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import protocols
from annotation.exports import stream_export
from annotation.models import Annotation, Campaign
from annotation.protocols.items import ItemError
from annotation.selectors import item_results
from annotation.services.campaigns import create_campaign
from annotation.services.claims import next_item_for
from annotation.services.submissions import start_viewing, submit_annotation
from tests.annotation.factories import enrolled, esa_item

TARGET = "Zielsatz Nummer 1 ist hier."
MQM_SPAN = {"start": 0, "end": 8, "severity": "major", "category": "Accuracy",
            "subcategory": "Mistranslation"}  # fmt: skip


def clean(protocol: str, answer, **kw):
    return protocols.clean_answer(protocol, answer, target=TARGET, **kw)


# --- protocol hooks (no database) ----------------------------------------------------------


def test_hybrid_needs_typed_spans_and_a_score():
    answer, errors, missing = clean("esa_mqm", {"spans": [{**MQM_SPAN, "category": ""}]})
    assert errors == []
    assert missing == ["span 1: choose a category", "give a 0–100 score"]
    answer, errors, missing = clean("esa_mqm", {"spans": [MQM_SPAN], "score": 40})
    assert (errors, missing) == ([], [])
    assert answer == {"spans": [MQM_SPAN], "score": 40, "confirmed_low_score": False}
    _, errors, _ = clean("esa_mqm", {"spans": [{**MQM_SPAN, "category": "Nope"}], "score": 101})
    assert errors[0].startswith("span 1: unknown MQM category") or "Nope" in errors[0]
    assert "the score must be a whole number from 0 to 100" in errors


def test_hybrid_asks_to_confirm_a_low_score_without_spans_as_esa_does():
    _, _, missing = clean("esa_mqm", {"spans": [], "score": 20})
    assert missing == ["confirm the score 20 although no error span is marked"]
    _, _, missing = clean("esa_mqm", {"spans": [], "score": 20, "confirmed_low_score": True})
    assert missing == []


def test_hybrid_score_is_the_overall_score_and_keeps_the_mqm_penalty():
    hybrid = protocols.get("esa_mqm")
    campaign = Campaign(protocol="esa_mqm")
    assert hybrid.submission_scores(campaign, {"spans": [MQM_SPAN], "score": 72}) == (72.0, 5.0)
    assert hybrid.score(campaign, {"spans": [MQM_SPAN], "score": 72}, None) == 72.0
    assert hybrid.severities(campaign) == ["minor", "major"]


def test_hybrid_items_import_like_mqm_items():
    item = protocols.normalize_item("esa_mqm", esa_item(1, prefill_spans=[MQM_SPAN]))
    assert item["prefill_spans"][0]["category"] == "Accuracy"
    with pytest.raises(ItemError, match="target is required"):
        protocols.normalize_item("esa_mqm", {**esa_item(1), "target": ""})


@pytest.mark.parametrize("name", ["esa", "mqm", "esa_mqm"])
def test_a_flagged_answer_needs_only_a_reason_and_has_no_score(name):
    answer, errors, missing = clean(name, {"non_scorable": True, "score": 3})
    assert (errors, missing) == ([], ["say briefly why this item cannot be scored"])
    flagged = {"non_scorable": True, "non_scorable_reason": "  Source is a list of URLs "}
    answer, errors, missing = clean(name, flagged)
    assert (errors, missing) == ([], [])
    assert answer == {
        "spans": [],
        "non_scorable": True,
        "non_scorable_reason": "Source is a list of URLs",
    }
    campaign = Campaign(protocol=name)
    assert protocols.get(name).submission_scores(campaign, answer) == (None, None)
    assert protocols.get(name).score(campaign, answer, 50.0) is None
    _, errors, _ = clean(name, {"non_scorable": True, "non_scorable_reason": "x" * 501})
    assert errors == ["non_scorable_reason is longer than 500 characters"]
    _, errors, _ = clean(name, {"non_scorable": "yes", "non_scorable_reason": "why"})
    assert errors == ["non_scorable must be true or absent"]


def test_choice_and_translation_have_no_flag():
    answer, _, _ = clean("choice", {"non_scorable": True, "selected": [0]}, n_choices=2)
    assert "non_scorable" not in answer
    answer, _, missing = clean("translation", {"non_scorable": True})
    assert "non_scorable" not in answer and missing == ["write the translation"]


def test_translation_answers_and_items():
    answer, errors, missing = clean("translation", {"translation": "  Ahoj světe  "})
    assert (answer, errors, missing) == ({"translation": "Ahoj světe", "comment": ""}, [], [])
    _, errors, _ = clean("translation", {"translation": 5})
    assert errors == ["translation must be text"]
    item = protocols.normalize_item("translation", {"source": "Hello", "src_lang": "en"})
    assert item["target"] == "" and item["source"] == "Hello"
    with pytest.raises(ItemError, match="translation items have no target"):
        protocols.normalize_item("translation", {"source": "Hello", "target": "Ahoj"})
    assert protocols.get("translation").has_scores is False


# --- the annotate page and submissions (HTTP) ------------------------------------------------

pytestmark = pytest.mark.django_db


def hybrid_campaign(n: int = 2, **settings):
    items = [esa_item(i) for i in range(1, n + 1)]
    return create_campaign("Hybrid", "esa_mqm", items, overlap=1, **settings)


def open_item(client, campaign, name="a"):
    annotator = enrolled(campaign, name)
    client.force_login(annotator.user)
    return annotator, client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"]


def test_hybrid_page_has_the_typed_span_editor_the_score_and_the_flag(client):
    _, url = open_item(client, hybrid_campaign())
    page = client.get(url)
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="target"' in html and 'id="score-input"' in html and 'id="non-scorable"' in html
    assert 'name="non_scorable_reason"' in html and "choose the category" in html
    payload = page.context["payload"]
    assert payload["features"] == ["spans", "typology", "score"] and payload["nonScorable"]


def test_hybrid_json_submission_stores_score_and_penalty(client):
    _, url = open_item(client, hybrid_campaign())
    answer = {"spans": [MQM_SPAN], "score": 61}
    response = client.post(
        f"{url}submit/", {"answer": json.dumps(answer)}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 200 and response.json()["ok"]
    annotation = Annotation.objects.get(status="submitted")
    assert (annotation.score, annotation.mqm_score) == (61.0, 5.0)


def test_flagging_with_the_plain_form_needs_a_reason_then_submits(client):
    campaign = hybrid_campaign()
    _, url = open_item(client, campaign)
    refused = client.post(f"{url}submit/", {"non_scorable": "on", "non_scorable_reason": ""})
    assert refused.status_code == 422
    assert "say briefly why this item cannot be scored" in refused.content.decode()
    assert Annotation.objects.get().status == "draft"
    done = client.post(f"{url}submit/", {"non_scorable": "on", "non_scorable_reason": "Gibberish"})
    assert done.status_code == 303
    annotation = Annotation.objects.get()
    assert annotation.status == "submitted" and annotation.score is None
    assert annotation.answer["non_scorable_reason"] == "Gibberish"


def test_translation_page_and_plain_form_submission(client):
    items = [{"doc_id": "d", "seg_id": "1", "source": "The cat sat."}]
    campaign = create_campaign("Translate", "translation", items, src_lang="en", tgt_lang="cs")
    _, url = open_item(client, campaign)
    html = client.get(url).content.decode()
    assert 'id="translation-input"' in html and "The cat sat." in html
    assert 'id="non-scorable"' not in html and 'id="target"' not in html
    empty = client.post(f"{url}submit/", {"translation": "  "})
    assert empty.status_code == 422 and "write the translation" in empty.content.decode()
    assert client.post(f"{url}submit/", {"translation": "Kočka seděla."}).status_code == 303
    rows = [json.loads(line) for line in stream_export(campaign, "jsonl")]
    assert [(r["src"], r["translation"], r["score"]) for r in rows] == [
        ("The cat sat.", "Kočka seděla.", None)
    ]
    csv_text = "".join(stream_export(campaign, "csv"))
    assert csv_text.splitlines()[0].endswith(",translation") and "Kočka seděla." in csv_text


# --- results for producers and exports ---------------------------------------------------------


def work(campaign, name, answers, seconds=12.0):
    annotator = enrolled(campaign, name)
    now = timezone.now()
    for answer in answers:
        item = next_item_for(annotator, campaign, now=now)
        start_viewing(annotator, item, now=now)
        now += timedelta(seconds=seconds)
        submit_annotation(annotator, item, answer, now=now)
        now += timedelta(seconds=1)
    assert next_item_for(annotator, campaign, now=now) is None  # finished: QC is final
    return annotator


FLAG = {"non_scorable": True, "non_scorable_reason": "untranslatable pun"}


def test_item_results_count_flags_of_qc_passing_annotators_only():
    campaign = create_campaign(
        "Flags", "esa_mqm", [esa_item(1), esa_item(2)], overlap=3, src_lang="en", tgt_lang="de"
    )
    work(campaign, "a", [FLAG, {"spans": [MQM_SPAN], "score": 70}])
    work(campaign, "b", [{"spans": [MQM_SPAN], "score": 50}, FLAG])
    work(campaign, "fast", [FLAG, FLAG], seconds=0.5)  # fails QC's time rule: counts nothing
    first, second = item_results(campaign)
    assert (first.n_judgments, first.n_non_scorable, first.mean_score) == (2, 1, 50.0)
    assert (second.n_judgments, second.n_non_scorable, second.mean_score) == (2, 1, 70.0)
    assert list(first.excluded.values()) == list(second.excluded.values()) == ["fail"]


def test_exports_carry_the_flag_and_the_mqm_tsv_skips_it():
    campaign = create_campaign(
        "Flag export", "mqm", [esa_item(1)], overlap=2, src_lang="en", tgt_lang="de"
    )
    work(campaign, "a", [FLAG])
    work(campaign, "b", [{"spans": [], "no_errors": True}])
    rows = [json.loads(line) for line in stream_export(campaign, "jsonl")]
    assert [(r["non_scorable"], r["non_scorable_reason"], r["mqm_score"]) for r in rows] == [
        (True, "untranslatable pun", None),
        (False, "", 0.0),
    ]
    (item,) = [json.loads(line) for line in stream_export(campaign, "jsonl", aggregate=True)]
    assert (item["n_non_scorable"], item["mean_score"], item["mean_mqm_score"]) == (1, 100.0, 0.0)
    tsv = "".join(stream_export(campaign, "mqm-tsv")).splitlines()
    assert len(tsv) == 2 and tsv[1].split("\t")[4] != rows[0]["annotator"]
    header = "".join(stream_export(campaign, "csv")).splitlines()[0]
    assert header.endswith(",non_scorable,non_scorable_reason")


@pytest.mark.parametrize("protocol", ["esa_mqm", "translation"])
def test_admin_pages_of_the_new_protocols(admin_client, protocol):
    item = esa_item(1) if protocol == "esa_mqm" else {"source": "Hello there."}
    campaign = create_campaign(f"Admin {protocol}", protocol, [item], overlap=1)
    answer = (
        {"spans": [MQM_SPAN], "score": 70} if protocol == "esa_mqm" else {"translation": "Ahoj."}
    )
    work(campaign, "a", [answer])
    for url in (f"/annotation/campaigns/{campaign.pk}/", f"/annotation/dashboard/{campaign.pk}/"):
        page = admin_client.get(url)
        assert page.status_code == 200, url
        assert campaign.protocol_label in page.content.decode()
