"""Rule pages, API, command and demo: start jobs (one per engine), watch one, per-concept errors,
cost, the concept page with generators side by side; the denied paths change nothing."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from lexical.models import Rule, RuleJob
from lexical.rules.demo import load_rules_demo
from lexical.rules.services import run_in_foreground, start_rule_jobs
from tests.engines.fake_openai import Reply
from tests.lexical.rule_helpers import concept, make_mining_job, remote_engine, world_engine

pytestmark = pytest.mark.django_db


def _post_form(client, **fields):
    data = {
        "source": "mining_job", "sentences_per_variation": 50, "max_sentence_tokens": 50,
        "max_reasks": 2, **fields,
    }  # fmt: skip
    return client.post("/lexical/rules/new/", data)


def test_the_form_starts_one_job_per_engine(
    admin_client, sent_tasks, django_capture_on_commit_callbacks
):
    mining = make_mining_job()
    world_engine("world-a")
    world_engine("world-b")
    page = admin_client.get(f"/lexical/rules/new/?mining_job={mining.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    assert "world-a (Offline lexical-selection world (simulation))" in html
    assert "SIMULATION" in html
    with django_capture_on_commit_callbacks(execute=True):
        response = _post_form(admin_client, mining_job=mining.pk, engines=["world-a", "world-b"])
    assert response.status_code == 302 and response["Location"] == "/lexical/rules/"
    jobs = list(RuleJob.objects.order_by("pk"))
    assert [j.engine for j in jobs] == ["world-a", "world-b"]
    assert [t[1] for t in sent_tasks] == [(jobs[0].pk, 0), (jobs[1].pk, 0)]
    listing = admin_client.get("/lexical/rules/").content.decode()
    assert f"Rules #{jobs[0].pk}" in listing and "world-b" in listing


def test_the_form_puts_service_errors_next_to_fields_and_creates_nothing(admin_client):
    make_mining_job()
    world_engine("world")
    response = _post_form(admin_client, engines=["world"])  # no mining job chosen
    assert response.status_code == 400
    assert "must be an id" in response.content.decode()
    response = _post_form(admin_client, source="concepts", concepts="1, x", engines=["world"])
    assert response.status_code == 400 and "whole numbers" in response.content.decode()
    response = _post_form(admin_client, source="concepts", concepts="999", engines=["world"])
    assert response.status_code == 400 and "no concept with id 999" in response.content.decode()
    assert not RuleJob.objects.exists()


def test_the_job_page_shows_progress_cost_and_per_concept_errors(
    admin_client, fake_openai, settings
):
    settings.LEXICAL_RULES_ROUND_CONCEPTS = 1  # one request at a time: the script's order holds
    mining = make_mining_job()
    remote_engine(fake_openai.base_url)
    fake_openai.push(*[Reply("not json", tokens_in=100, tokens_out=50)] * 3)
    fake_openai.push(Reply(json.dumps({"viaje/viajes": "a", "recorrido": "b", "excursión": "c"})))
    (job,) = start_rule_jobs(
        {
            "engines": ["remote"],
            "concepts": [concept(mining, "date").pk, concept(mining, "trip").pk],
        },
        enqueue=False,
    )
    queued = admin_client.get(f"/lexical/rules/jobs/{job.pk}/").content.decode()
    assert "waiting for a worker" in queued and 'hx-trigger="every 2s"' in queued
    job = run_in_foreground(job.pk)
    html = admin_client.get(f"/lexical/rules/jobs/{job.pk}/").content.decode()
    assert "2 / 2" in html and "1 failed" in html
    assert "no usable rules after 3 answer(s); the last: it contains no JSON object" in html
    assert "$0.6200" in html  # 3 × (100 × 1 + 50 × 2) / 1000 + (10 × 1 + 5 × 2) / 1000
    assert 'hx-trigger="every 2s"' not in html and "SIMULATION" not in html
    partial = admin_client.get(f"/lexical/rules/jobs/{job.pk}/", headers={"HX-Request": "true"})
    assert partial.status_code == 286  # stop polling: the job is over
    assert partial["HX-Trigger"] == "rules-changed"
    table = admin_client.get(f"/lexical/rules/jobs/{job.pk}/concepts/").content.decode()
    assert f"/lexical/rules/concepts/{concept(mining, 'trip').pk}/" in table


def test_the_job_list_polls_until_every_job_on_it_has_ended(admin_client):
    mining = make_mining_job()
    world_engine("world")
    (job,) = start_rule_jobs(
        {
            "engines": ["world"],
            "concepts": [concept(mining, "date").pk, concept(mining, "trip").pk],
        },
        enqueue=False,
    )
    page = admin_client.get("/lexical/rules/").content.decode()
    assert 'hx-get="/lexical/rules/" hx-trigger="every 2s"' in page and "0 / 2" in page
    polled = admin_client.get("/lexical/rules/", headers={"HX-Request": "true"})
    assert polled.status_code == 200 and "0 / 2" in polled.content.decode()
    assert "<h1>" not in polled.content.decode()  # the table alone
    run_in_foreground(job.pk)
    polled = admin_client.get("/lexical/rules/", headers={"HX-Request": "true"})
    assert polled.status_code == 286  # every job has ended: polling stops
    html = polled.content.decode()
    assert "2 / 2" in html and ">finished<" in html and "hx-trigger" not in html
    assert 'hx-trigger="every 2s"' not in admin_client.get("/lexical/rules/").content.decode()


def test_the_concept_page_shows_generators_side_by_side_with_validation(admin_client, fake_openai):
    mining = make_mining_job()
    world_engine("world")
    remote_engine(fake_openai.base_url)
    date = concept(mining, "date")
    fake_openai.push(*[Reply("{}")] * 3)
    for name in ("world", "remote"):
        (job,) = start_rule_jobs({"engines": [name], "concepts": [date.pk]}, enqueue=False)
        run_in_foreground(job.pk)
    Rule.objects.filter(variation__lemma="khorma").update(validation_status="correct")
    html = admin_client.get(f"/lexical/rules/concepts/{date.pk}/").content.decode()
    header = html.split("<thead>")[1].split("</thead>")[0]
    assert header.index(">remote ") < header.index(">world ")
    assert "Use «khorma» when the sentence is about: palm, sweet, fruit." in html
    assert "No rule: no usable rules after 3 answer(s)" in html
    assert header.count(">simulation</span>") == 1  # the world engine's column only
    assert ">correct</span>" in html and ">not validated</span>" in html
    # A newer job of the same generator replaces its column.
    (job,) = start_rule_jobs({"engines": ["world"], "concepts": [date.pk]}, enqueue=False)
    run_in_foreground(job.pk)
    html = admin_client.get(f"/lexical/rules/concepts/{date.pk}/").content.decode()
    assert f"job #{job.pk}" in html and html.count("Use «khorma»") == 1


def test_a_concept_page_links_to_its_rules_or_to_generating_them(admin_client):
    mining = make_mining_job()
    world_engine("world")
    date = concept(mining, "date")
    page = admin_client.get(f"/lexical/concepts/{date.pk}/").content.decode()
    assert f'href="/lexical/rules/new/?concepts={date.pk}">generate rules' in page
    form = admin_client.get(f"/lexical/rules/new/?concepts={date.pk}").content.decode()
    assert f'name="concepts" value="{date.pk}"' in form
    assert re.search(r'value="concepts"[^>]*checked', form)
    (job,) = start_rule_jobs({"engines": ["world"], "concepts": [date.pk]}, enqueue=False)
    run_in_foreground(job.pk)
    page = admin_client.get(f"/lexical/concepts/{date.pk}/").content.decode()
    assert f'<a href="/lexical/rules/concepts/{date.pk}/">Its rules</a>' in page
    assert "(by world)" in page
    rules = admin_client.get(f"/lexical/rules/concepts/{date.pk}/").content.decode()
    assert f'<a href="/lexical/concepts/{date.pk}/">' in rules  # and back


@pytest.mark.parametrize(
    "url",
    ["/lexical/rules/", "/lexical/rules/new/", "/lexical/rules/jobs/{job}/",
     "/lexical/rules/concepts/{concept}/"],
)  # fmt: skip
def test_pages_are_staff_only(client, annotator_client, url):
    mining = make_mining_job()
    world_engine("world")
    (job,) = start_rule_jobs({"engines": ["world"], "mining_job": mining.pk}, enqueue=False)
    url = url.format(job=job.pk, concept=concept(mining, "date").pk)
    assert client.get(url).status_code == 302
    assert annotator_client.get(url).status_code == 302


def test_cancel_from_the_page_and_unknown_ids_are_404(admin_client, annotator_user):
    mining = make_mining_job()
    world_engine("world")
    (job,) = start_rule_jobs({"engines": ["world"], "mining_job": mining.pk}, enqueue=False)
    other = Client()
    other.force_login(annotator_user)
    other.post(f"/lexical/rules/jobs/{job.pk}/cancel/")
    job.refresh_from_db()
    assert job.status == "queued"
    admin_client.post(f"/lexical/rules/jobs/{job.pk}/cancel/")
    job.refresh_from_db()
    assert job.status == "cancelled"
    assert admin_client.get("/lexical/rules/jobs/999999/").status_code == 404
    assert admin_client.get("/lexical/rules/concepts/999999/").status_code == 404


# --- API -------------------------------------------------------------------------------------


def test_api_creates_lists_reads_and_lists_rules_per_concept(admin_client):
    mining = make_mining_job()
    world_engine("world-a")
    world_engine("world-b")
    response = admin_client.post(
        "/api/lexical-rule-jobs/",
        {"engines": ["world-a", "world-b"], "mining_job": mining.pk, "params": {"max_reasks": 1}},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    created = response.json()
    assert [j["engine"] for j in created] == ["world-a", "world-b"]
    assert created[0]["params"]["max_reasks"] == 1 and created[0]["status"] == "queued"
    for row in created:
        run_in_foreground(row["id"])
    listing = admin_client.get("/api/lexical-rule-jobs/").json()
    assert listing["count"] == 2
    detail = admin_client.get(f"/api/lexical-rule-jobs/{created[0]['id']}/").json()
    assert detail["status"] == "finished" and detail["cost"] == 0.0
    assert [c["lemma"] for c in detail["concepts"]] == ["date", "trip"]
    assert {c["status"] for c in detail["concepts"]} == {"ok"}
    date = concept(mining, "date")
    rules = admin_client.get(f"/api/lexical-rules/?concept={date.pk}").json()
    assert rules["count"] == 4
    assert {(r["generator"], r["variation_label"]) for r in rules["results"]} == {
        (g, v) for g in ("world-a", "world-b") for v in ("khorma", "tarikh/tarikhha")
    }
    assert {r["validation_status"] for r in rules["results"]} == {"unvalidated"}
    only_b = admin_client.get(f"/api/lexical-rules/?concept={date.pk}&generator=world-b").json()
    assert only_b["count"] == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"engines": ["nope"], "concepts": [1]}, "engines"),
        ({"engines": ["world"]}, "source"),
        ({"engines": ["world"], "concepts": [1], "params": {"max_reasks": -1}}, "max_reasks"),
        (["not", "an", "object"], "config"),
    ],
)
def test_api_refusals_are_400_with_field_errors_and_create_nothing(admin_client, body, field):
    world_engine("world")
    response = admin_client.post("/api/lexical-rule-jobs/", body, content_type="application/json")
    assert response.status_code == 400
    assert field in response.json()["errors"] and response.json()["detail"]
    assert not RuleJob.objects.exists()


@pytest.mark.parametrize(
    "raw",
    ['{"engines": ["world"], "engines": ["world"], "concepts": [1]}',
     '{"engines": ["world"], "concepts": [NaN]}', '{"engines": '],
)  # fmt: skip
def test_api_hostile_bodies_are_400(admin_client, raw):
    world_engine("world")
    response = admin_client.post("/api/lexical-rule-jobs/", raw, content_type="application/json")
    assert response.status_code == 400
    assert not RuleJob.objects.exists()


def test_api_rules_need_a_concept_id_and_is_staff_only(admin_client, annotator_user):
    assert admin_client.get("/api/lexical-rules/").status_code == 400
    assert admin_client.get("/api/lexical-rules/?concept=abc").status_code == 400
    annotator_client = Client()
    annotator_client.force_login(annotator_user)
    assert annotator_client.get("/api/lexical-rules/?concept=1").status_code == 403
    assert annotator_client.get("/api/lexical-rule-jobs/").status_code == 403


def test_api_cancel_answers_409_when_over(admin_client):
    mining = make_mining_job()
    world_engine("world")
    (job,) = start_rule_jobs({"engines": ["world"], "mining_job": mining.pk}, enqueue=False)
    assert admin_client.post(f"/api/lexical-rule-jobs/{job.pk}/cancel/").json()["status"] == (
        "cancelled"
    )
    assert admin_client.post(f"/api/lexical-rule-jobs/{job.pk}/cancel/").status_code == 409


# --- command and demo ----------------------------------------------------------------------


def test_generate_rules_runs_in_the_foreground_and_reports_per_concept_errors(
    fake_openai, settings
):
    settings.LEXICAL_RULES_ROUND_CONCEPTS = 1
    mining = make_mining_job()
    world_engine("world")
    remote_engine(fake_openai.base_url)
    fake_openai.push(*[Reply("{}")] * 3)
    fake_openai.push(Reply(json.dumps({"viaje": "a", "recorrido": "b", "excursión": "c"})))
    out = StringIO()
    call_command(
        "generate_rules", "--engine", "world", "--engine", "remote",
        "--mining-job", str(mining.pk), "--max-reasks", "2", stdout=out,
    )  # fmt: skip
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("(world) finished: 2/2 concepts, 0 failed, cost 0.0000")
    assert "(remote) finished: 2/2 concepts, 1 failed" in lines[1]
    assert lines[2].startswith("  date (NOUN): no usable rules after 3 answer(s); the last:")
    assert Rule.objects.filter(generator="world").count() == 5
    assert Rule.objects.filter(generator="remote").count() == 3


def test_generate_rules_refusals_are_one_line_command_errors(sent_tasks):
    mining = make_mining_job()
    world_engine("world")
    with pytest.raises(CommandError, match="nothing created: engines: 'nope'"):
        call_command("generate_rules", "--engine", "nope", "--mining-job", str(mining.pk))
    with pytest.raises(CommandError, match="not a comma-separated list of ids"):
        call_command("generate_rules", "--engine", "world", "--concepts", "1,x")
    with pytest.raises(CommandError, match="sentences_per_variation"):
        call_command(
            "generate_rules", "--engine", "world", "--mining-job", str(mining.pk),
            "--sentences", "0",
        )  # fmt: skip
    assert not RuleJob.objects.exists()
    out = StringIO()
    call_command(
        "generate_rules", "--engine", "world", "--mining-job", str(mining.pk), "--queue", stdout=out
    )
    assert "queued for the workers" in out.getvalue()
    assert RuleJob.objects.get().status == "queued"


def test_the_demo_writes_rules_with_two_world_engines_once(admin_client):
    def client_page(pk: int) -> str:
        return admin_client.get(f"/lexical/rules/jobs/{pk}/").content.decode()

    mining = make_mining_job()
    out = StringIO()
    jobs = load_rules_demo(out, mining)
    assert [j.engine for j in jobs] == ["sim-lexical-strong", "sim-lexical-weak"]
    assert ">SIMULATION</span>" in client_page(jobs[0].pk)
    assert all(j.status == "finished" and j.concepts_failed == 0 for j in jobs)
    weak = Rule.objects.get(generator="sim-lexical-weak", variation__lemma="khorma")
    assert weak.text == "Use «khorma» when the sentence is about: palm, sweet."
    assert load_rules_demo(out, mining) == []  # idempotent
    assert "wrote rules for 2 of 2 concepts" in out.getvalue()


@pytest.mark.parametrize(
    "url",
    ["/api/lexical-rule-jobs/99999999999999999999999/",
     "/lexical/rules/jobs/99999999999999999999999/",
     "/lexical/rules/concepts/99999999999999999999999/",
     "/api/lexical-rules/?concept=99999999999"],
)  # fmt: skip
def test_huge_ids_are_404_or_empty_never_500(admin_client, url):
    response = admin_client.get(url)
    assert response.status_code in (200, 404)
    if response.status_code == 200:
        assert response.json()["count"] == 0
