"""Evaluation pages, API, CSV exports and the command twin, through their interfaces."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from lexical.evaluation import demo, rule_source
from lexical.evaluation.services import run_in_foreground, start_lexical_evaluation
from lexical.models import LexicalAnswer, LexicalEvaluation
from tests.engines.conftest import fake_openai  # noqa: F401  (fixture)
from tests.lexical.eval_helpers import make_engines, make_selection, rules_table, scripted

pytestmark = pytest.mark.django_db


@pytest.fixture
def selection(db):
    return make_selection()


@pytest.fixture
def server(fake_openai):  # noqa: F811
    fake_openai.responder = scripted
    make_engines(fake_openai.base_url, "oracle", "contrarian", "ruled", "mt")
    return fake_openai


@pytest.fixture
def rules(monkeypatch, selection):
    monkeypatch.setattr(
        rule_source, "rules_for", lambda ids, generator: rules_table(selection, generator)
    )


@pytest.fixture
def finished(server, selection, rules):
    evaluation = start_lexical_evaluation(
        {
            "selection": selection.pk,
            "entries": ["oracle:none", "ruled:none", "ruled:self", "mt:translate"],
            "runs": 2,
            "seed": 9,
        },
        enqueue=False,
    )
    return run_in_foreground(evaluation.pk)


def _csv(response) -> list[dict]:
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return list(csv.DictReader(io.StringIO(body.decode())))


# --- Pages -------------------------------------------------------------------------------------


def test_the_form_lists_engines_by_setting_and_creates_a_queued_evaluation(
    admin_client, server, selection, rules, sent_tasks, django_capture_on_commit_callbacks
):
    page = admin_client.get("/lexical/evaluation/new/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'value="oracle:self"' in html and 'value="mt:translate"' in html
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/lexical/evaluation/new/",
            {"selection": selection.pk, "chat": ["oracle:none", "ruled:other"],
             "generator": "oracle", "translate": ["mt:translate"], "runs": 2, "seed": 4},
        )  # fmt: skip
    evaluation = LexicalEvaluation.objects.get()
    assert response.status_code == 302 and response.url == f"/lexical/evaluation/{evaluation.pk}/"
    keys = [e["engine"] + ":" + e["setting"] for e in evaluation.entries]
    assert keys == ["oracle:none", "ruled:other", "mt:translate"]
    assert evaluation.entries[1]["generator"] == "oracle"
    assert (evaluation.runs, evaluation.seed, evaluation.status) == (2, 4, "queued")
    assert evaluation.items_total == (2 + 2 + 1) * 5
    assert sent_tasks == [
        ("lexical.advance_evaluation", (evaluation.pk, 0), {"queue": "slow", "countdown": None})
    ]


def test_a_refused_form_says_why_and_creates_nothing(admin_client, server, selection):
    response = admin_client.post(
        "/lexical/evaluation/new/",
        {"selection": selection.pk, "chat": ["oracle:self"], "runs": 3},
    )
    assert response.status_code == 400
    assert "Nothing was created" in response.content.decode()
    assert "oracle has no rules for every variation" in response.content.decode()
    response = admin_client.post(
        "/lexical/evaluation/new/", {"selection": selection.pk, "chat": ["oracle:other"], "runs": 3}
    )
    assert response.status_code == 400 and "name the generator" in response.content.decode()
    assert not LexicalEvaluation.objects.exists()


def test_the_evaluation_page_shows_accuracy_concepts_bias_and_charts(admin_client, finished):
    response = admin_client.get(f"/lexical/evaluation/{finished.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    for text in ("Micro accuracy", "Per concept", "Position bias", "frequency baseline",
                 "self-generated rules", "NMT", "trip", "viaje/viajes, recorrido"):  # fmt: skip
        assert text in html, text
    chart = admin_client.get(f"/lexical/evaluation/{finished.pk}/chart.svg")
    assert chart["Content-Type"] == "image/svg+xml" and b"</svg>" in chart.content
    for size in (2, 3):
        bias = admin_client.get(f"/lexical/evaluation/{finished.pk}/bias-{size}.svg")
        assert bias.status_code == 200 and b"position 2" in bias.content
    assert admin_client.get(f"/lexical/evaluation/{finished.pk}/bias-4.svg").status_code == 404
    listing = admin_client.get("/lexical/evaluation/")
    assert listing.status_code == 200 and "chart.svg" in listing.content.decode()
    overview = admin_client.get("/lexical/evaluation/chart.svg")
    assert b"</svg>" in overview.content and b">es<" in overview.content


def test_htmx_polling_stops_when_finished_and_signals_a_change(admin_client, finished):
    response = admin_client.get(f"/lexical/evaluation/{finished.pk}/", HTTP_HX_REQUEST="true")
    assert response.status_code == 286  # stop polling
    assert response["HX-Trigger"] == "evaluation-changed"
    assert 'id="evaluation-status"' in response.content.decode()
    results = admin_client.get(f"/lexical/evaluation/{finished.pk}/results/")
    assert 'id="evaluation-results"' in results.content.decode()


def test_pages_are_staff_only(client, annotator_client, finished):
    for url in (f"/lexical/evaluation/{finished.pk}/", "/lexical/evaluation/new/",
                f"/lexical/evaluation/{finished.pk}/answers.csv"):  # fmt: skip
        assert client.get(url).status_code == 302  # to the login page
        assert annotator_client.get(url).status_code == 302


def test_cancel_from_the_page(admin_client, server, selection):
    evaluation = start_lexical_evaluation(
        {"selection": selection.pk, "entries": ["oracle:none"]}, enqueue=False
    )
    response = admin_client.post(f"/lexical/evaluation/{evaluation.pk}/cancel/")
    assert response.status_code == 302
    evaluation.refresh_from_db()
    assert evaluation.status == "cancelled"


# --- CSV ---------------------------------------------------------------------------------------


def test_the_answers_csv_has_one_line_per_answer(admin_client, finished):
    rows = _csv(admin_client.get(f"/lexical/evaluation/{finished.pk}/answers.csv"))
    assert len(rows) == LexicalAnswer.objects.filter(evaluation=finished).count() == 3 * 2 * 5 + 5
    oracle = [r for r in rows if r["entry"] == "oracle:none"]
    assert len(oracle) == 10 and all(
        r["correct"] == "1" and r["chosen"] == r["attested"] for r in oracle
    )
    first = oracle[0]
    assert first["options"].count(" | ") in (1, 2) and first["chosen_position"] in ("1", "2", "3")
    assert first["raw_answer"].startswith("The context fits")
    mt = [r for r in rows if r["entry"] == "mt:translate"]
    assert {r["options"] for r in mt} == {""} and {r["run"] for r in mt} == {"1"}


def test_the_summary_csv_has_hand_computable_numbers(admin_client, finished):
    rows = {
        r["entry"]: r
        for r in _csv(admin_client.get(f"/lexical/evaluation/{finished.pk}/summary.csv"))
    }
    assert set(rows) == {
        "oracle:none",
        "ruled:none",
        "ruled:self",
        "mt:translate",
        "frequency baseline",
    }
    assert (rows["oracle:none"]["micro_mean"], rows["oracle:none"]["micro_sd"]) == (
        "1.000000",
        "0.000000",
    )
    assert rows["oracle:none"]["micro_by_run"] == "1.000000 1.000000"
    assert rows["ruled:none"]["micro_mean"] == "0.000000"
    assert rows["ruled:self"]["macro_mean"] == "1.000000"
    # mt: viaje ✓, viajecito→viaje ✗, excursión ✗ (trip 1/3); aviones ✓, planos→plano ✓ (plane 2/2).
    assert rows["mt:translate"]["micro_mean"] == "0.600000"
    assert rows["mt:translate"]["macro_mean"] == f"{(1 / 3 + 1) / 2:.6f}"
    assert rows["frequency baseline"]["macro_mean"] == f"{(2 / 3 + 1 / 2) / 2:.6f}"


# --- API ---------------------------------------------------------------------------------------


def test_the_api_creates_lists_and_reports_results(admin_client, server, selection, finished):
    response = admin_client.post(
        "/api/lexical-evaluations/",
        {"selection": selection.pk, "entries": ["contrarian:none"], "runs": 1},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["status"] == "queued" and created["items_total"] == 5
    assert created["links"]["page"].endswith(f"/lexical/evaluation/{created['id']}/")
    listing = admin_client.get("/api/lexical-evaluations/").json()
    assert {row["id"] for row in listing["results"]} == {created["id"], finished.pk}
    results = admin_client.get(f"/api/lexical-evaluations/{finished.pk}/results/").json()
    by_entry = {row["entry"]: row for row in results["summary"]}
    assert by_entry["ruled:self"]["micro"] == {"mean": 1.0, "sd": 0.0, "by_run": [1.0, 1.0]}
    assert by_entry["baseline"]["micro"]["mean"] == pytest.approx(0.6)
    trip = next(c for c in results["concepts"] if c["lemma"] == "trip")
    assert trip["accuracy"]["oracle:none"] == 1.0 and trip["accuracy"]["baseline"] == pytest.approx(
        2 / 3
    )
    counts = {(b["options"], b["entry"]): sum(b["counts"]) for b in results["position_bias"]}
    assert counts[(2, "oracle:none")] == 6 and counts[(3, "oracle:none")] == 4
    csv_rows = _csv(admin_client.get(f"/api/lexical-evaluations/{finished.pk}/answers-csv/"))
    assert len(csv_rows) == 35
    summary_rows = _csv(admin_client.get(f"/api/lexical-evaluations/{finished.pk}/summary-csv/"))
    assert len(summary_rows) == 5


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b'{"selection": 1, "selection": 2, "entries": ["x:none"]}',
        b"[1, 2]",
        b'{"selection": 1e999, "entries": ["x:none"]}',
        b'{"selection": NaN, "entries": ["x:none"]}',
    ],
)
def test_hostile_api_bodies_are_4xx_and_write_nothing(admin_client, server, selection, body):
    response = admin_client.post("/api/lexical-evaluations/", body, content_type="application/json")
    assert 400 <= response.status_code < 500, response.content
    assert "detail" in response.json()
    assert not LexicalEvaluation.objects.exists()


def test_the_api_is_staff_only(annotator_client, finished):
    assert annotator_client.get("/api/lexical-evaluations/").status_code == 403
    assert (
        annotator_client.get(f"/api/lexical-evaluations/{finished.pk}/results/").status_code == 403
    )


def test_the_api_cancels_once(admin_client, server, selection):
    evaluation = start_lexical_evaluation(
        {"selection": selection.pk, "entries": ["oracle:none"]}, enqueue=False
    )
    assert admin_client.post(f"/api/lexical-evaluations/{evaluation.pk}/cancel/").status_code == 200
    assert admin_client.post(f"/api/lexical-evaluations/{evaluation.pk}/cancel/").status_code == 409


# --- Command and demo --------------------------------------------------------------------------


def test_the_command_runs_in_the_foreground_and_prints_the_table(server, selection):
    out = io.StringIO()
    call_command(
        "evaluate_lexical", "--selection", str(selection.pk), "--engine", "oracle:none",
        "--engine", "contrarian:none", "--runs", "2", "--seed", "3", "--foreground", "--json",
        stdout=out,
    )  # fmt: skip
    payload = json.loads(out.getvalue())
    assert payload["status"] == "finished" and payload["seed"] == 3
    micro = {row["entry"]: row["micro"]["mean"] for row in payload["summary"]}
    assert micro == {"oracle:none": 1.0, "contrarian:none": 0.0, "baseline": pytest.approx(0.6)}
    text = io.StringIO()
    call_command(
        "evaluate_lexical", "--selection", str(selection.pk), "--engine", "oracle:none",
        "--foreground", stdout=text,
    )  # fmt: skip
    assert "oracle:none | es | 100.0 ± 0.0 | 100.0 ± 0.0" in text.getvalue()


def test_the_command_refuses_a_bad_entry_with_the_field(server, selection):
    with pytest.raises(CommandError, match="entries: entry 1: 'oracle:sometimes'"):
        call_command(
            "evaluate_lexical", "--selection", str(selection.pk), "--engine", "oracle:sometimes"
        )
    assert not LexicalEvaluation.objects.exists()


def test_the_demo_runs_an_evaluation_once(server, selection, rules):
    first = demo.load(
        selection, ["ruled", "oracle"], rules_from="oracle", translators=["mt"], runs=2
    )
    assert first.status == "finished"
    keys = [f"{e['engine']}:{e['setting']}" for e in first.entries]
    assert keys == [
        "ruled:none",
        "ruled:self",
        "ruled:other",
        "oracle:none",
        "oracle:self",
        "mt:translate",
    ]
    assert demo.load(selection, ["ruled"]).pk == first.pk
