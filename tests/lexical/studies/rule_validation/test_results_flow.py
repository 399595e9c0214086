"""Results of a study from real submissions: QC exclusion, ties, write-back of rule verdicts,
and the whole flow through the pages and the API."""

from __future__ import annotations

import functools

import pytest
from django.test import Client
from django.urls import resolve
from rest_framework.test import APIClient

from annotation.models import Campaign, Item
from lexical.models import Rule, RuleValidationStudy
from lexical.studies.rule_validation.selectors import study_results
from lexical.studies.rule_validation.services import apply_rule_verdicts, create_study
from tests.annotation.campaign_builders import make_annotator, work
from tests.annotation.factories import enrolled
from tests.lexical.studies.rule_validation.helpers import (
    answers_for,
    make_rule_job,
    make_study,
    make_world,
)

pytestmark = pytest.mark.django_db


def by_generator(generator: str, value_for_it: str, other: str):
    return lambda item, qid: (
        value_for_it if item.meta["rules"][qid]["generator"] == generator else other
    )


def test_only_annotators_who_pass_qc_count():
    study = make_study()
    # The failing annotator goes first, so their answers really sit on the items.
    work(make_annotator("d"), study.campaign, answers_for(
        missing="yes", wrong=lambda item: list(range(len(item.meta["variation_ids"]))),
        rule=lambda item, qid: "no", pass_checks=False,
    ))  # fmt: skip
    work(make_annotator("a"), study.campaign, answers_for())
    work(make_annotator("b"), study.campaign, answers_for(wrong=lambda item: [0]))
    results = study_results(study)
    assert (results.annotators_counted, results.annotators_excluded) == (2, 1)
    assert (results.items_total, results.items_complete) == (2, 0)
    # a and b only: 5 listed variations × 2, b marked one per concept.
    assert (results.precision.micro_positive, results.precision.micro_total) == (8, 10)
    assert results.recall.micro == 1.0
    assert results.rules["gpt"].micro == 1.0
    # Not complete (2 of 3 counted): no majority yet, and no verdict written.
    assert results.precision.majority_total == 0
    assert apply_rule_verdicts(study) == 0
    assert set(Rule.objects.values_list("validation_status", flat=True)) == {"unvalidated"}


def test_majority_micro_and_write_back_with_three_annotators():
    study = make_study()
    work(make_annotator("a"), study.campaign, answers_for())
    work(make_annotator("b"), study.campaign, answers_for(
        wrong=lambda item: [0], rule=by_generator("gemma", "no", "yes"),
    ))  # fmt: skip
    work(make_annotator("c"), study.campaign, answers_for(
        missing="yes", wrong=lambda item: [0], rule=by_generator("gemma", "no", "yes"),
    ))  # fmt: skip
    results = study_results(study)
    assert (results.annotators_counted, results.items_complete) == (3, 2)
    # Option 0 of each concept marked by 2 of 3: wrong by majority; micro 15 − 4 marks.
    assert (results.precision.micro_positive, results.precision.micro_total) == (11, 15)
    assert (results.precision.majority_positive, results.precision.majority_total) == (3, 5)
    assert (results.recall.micro_positive, results.recall.majority) == (4, 1.0)
    assert (results.rules["gpt"].micro, results.rules["gpt"].majority) == (1.0, 1.0)
    assert results.rules["gemma"].micro == pytest.approx(1 / 3, abs=1e-6)
    assert results.rules["gemma"].majority == 0.0
    # gpt's 5 rules unanimous, gemma's 5 (yes, no, no); recall (no, no, yes) on both concepts.
    assert results.agreement["rules"].total_agreement == 0.5
    assert results.agreement["recall"].total_agreement == 0.0
    assert apply_rule_verdicts(study) == 10
    statuses = dict(Rule.objects.values_list("generator", "validation_status").distinct())
    assert statuses == {"gpt": "correct", "gemma": "incorrect"}
    assert apply_rule_verdicts(study) == 0  # idempotent


def test_a_tie_leaves_the_rule_unvalidated():
    job, _ = make_world()
    rule_job = make_rule_job(job, "solo")
    study = create_study({"name": "Ties", "mining_job": job.pk, "rule_jobs": [rule_job.pk],
                          "overlap": 2, "attention_checks": 0})  # fmt: skip
    Rule.objects.filter(job=rule_job).update(validation_status="correct")
    work(make_annotator("a"), study.campaign, answers_for())
    work(make_annotator("b"), study.campaign, answers_for(rule=lambda item, qid: "no"))
    results = study_results(study)
    assert (results.rules["solo"].majority, results.rules["solo"].ties) == (None, 5)
    assert apply_rule_verdicts(study) == 5
    assert set(Rule.objects.filter(job=rule_job).values_list("validation_status", flat=True)) == {
        "unvalidated"
    }


def _answer_through_the_page(client, campaign: Campaign, name: str, form_for) -> int:
    annotator = enrolled(campaign, name)
    client.force_login(annotator.user)
    done = 0
    while True:
        location = client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"]
        if not location.startswith("/annotation/items/"):
            return done
        item = Item.objects.get(pk=resolve(location).kwargs["item_id"])
        form = form_for(item) | {"idempotency_key": f"{name}-{item.pk}"}
        assert client.post(f"{location}submit/", form).status_code == 303
        done += 1


def _form(item: Item, *, rules: str, mark_first: bool) -> dict:
    if item.kind == Item.Kind.ATTENTION_CHECK:
        return {
            "q.recall": "no",
            "qm.precision": [str(i) for i in item.expected["answers"]["precision"]],
        }
    form = {"q.recall": "no", "qm.precision": ["0"] if mark_first else ["none"]}
    return form | {f"q.{qid}": rules for qid in item.meta["rules"]}


def test_full_flow_form_then_annotate_page_then_results_page_csv_and_api(admin_client, admin_user):
    job, rule_jobs = make_world()
    response = admin_client.post(
        "/lexical/rule-validation/new/",
        {"name": "Flow", "mining_job": job.pk, "rule_jobs": [j.pk for j in rule_jobs],
         "seed": 0, "overlap": 3, "attention_checks": 2},
    )  # fmt: skip
    study = RuleValidationStudy.objects.get()
    assert (
        response.status_code == 302
        and response["Location"] == f"/lexical/rule-validation/{study.pk}/"
    )
    campaign = study.campaign
    # The test client submits instantly; the time rule of QC is not what this test is about.
    Campaign.objects.filter(pk=campaign.pk).update(qc_min_seconds_per_item=0)
    for name, rules, mark_first in (("x", "yes", False), ("y", "yes", True), ("z", "no", False)):
        client = Client()
        count = _answer_through_the_page(
            client, campaign, name, functools.partial(_form, rules=rules, mark_first=mark_first)
        )
        assert count == 4  # 2 concepts + 2 checks
    page = admin_client.get(f"/lexical/rule-validation/{study.pk}/").content.decode()
    assert "<strong>2</strong> of 2 concept items complete" in page
    assert "<strong>3</strong> annotators counted" in page
    # Precision micro: 15 judgements, y marked one per concept -> 13/15 = 0.867.
    assert '0.867 <small class="muted">(13/15)</small>' in page
    assert f'href="/annotation/dashboard/{campaign.pk}/"' in page
    assert set(Rule.objects.values_list("validation_status", flat=True)) == {"correct"}
    csv_text = admin_client.get(f"/lexical/rule-validation/{study.pk}/results.csv").content
    assert b"table1_mined_variations,precision,micro,0.866667,13,15,\n" in csv_text
    api = APIClient()
    api.force_authenticate(admin_user)
    body = api.get(f"/api/lexical-rule-validations/{study.pk}/").json()
    assert body["campaign_name"] == "Flow"
    assert body["results"]["precision"]["micro"] == 0.866667
    assert body["results"]["rules"]["gpt"]["majority"] == 1.0
    assert body["results"]["agreement"]["rules"]["total_agreement"] == 0.0
    assert api.get("/api/lexical-rule-validations/").json()["results"][0]["id"] == study.pk


def test_verdicts_are_written_when_an_item_completes(django_capture_on_commit_callbacks):
    study = make_study("On completion", attention_checks=0)
    with django_capture_on_commit_callbacks(execute=True):
        work(make_annotator("a"), study.campaign, answers_for())
        work(make_annotator("b"), study.campaign, answers_for())
    assert set(Rule.objects.values_list("validation_status", flat=True)) == {"unvalidated"}
    with django_capture_on_commit_callbacks(execute=True):
        work(
            make_annotator("c"),
            study.campaign,
            answers_for(rule=by_generator("gemma", "no", "yes")),
        )
    statuses = dict(Rule.objects.values_list("generator", "validation_status").distinct())
    assert statuses == {"gpt": "correct", "gemma": "correct"}  # gemma: yes, yes, no


def test_a_rule_two_generators_wrote_alike_is_asked_once_and_judges_both():
    job, rule_jobs = make_world()
    gpt, gemma = (Rule.objects.get(generator=g, variation__lemma="viaje") for g in ("gpt", "gemma"))
    # The same rule, up to case, spacing and the final full stop.
    Rule.objects.filter(pk=gpt.pk).update(text="Use viaje for a  journey.")
    Rule.objects.filter(pk=gemma.pk).update(text="use VIAJE for a journey")
    study = create_study(
        {"name": "RV dedupe", "mining_job": job.pk, "rule_jobs": [j.pk for j in rule_jobs]}
    )
    trip = study.campaign.items.get(origin_ref=str(gpt.concept_id))
    asked = [q for q in trip.questions if q["family"] == "rules"]
    assert len(asked) == 5  # 3 variations × 2 generators, one rule asked once
    older, newer = sorted((gpt, gemma), key=lambda rule: rule.pk)
    first = older.pk
    question = next(q for q in asked if q["id"] == f"rule-{first}")
    assert question["prompt"].endswith(": " + Rule.objects.get(pk=first).text)
    assert trip.meta["rules"][f"rule-{first}"]["rules"] == [
        {"rule_id": older.pk, "generator": older.generator},
        {"rule_id": newer.pk, "generator": newer.generator},
    ]
    assert f"rule-{newer.pk}" not in trip.meta["rules"]

    def no_to_viaje(item, qid):
        return "no" if qid == f"rule-{first}" else "yes"

    for name in ("a", "b", "c"):
        work(make_annotator(name), study.campaign, answers_for(rule=no_to_viaje))
    results = study_results(study)
    # Each generator's rule counts in its own column: 5 rules each, one judged incorrect.
    assert (results.rules["gpt"].majority_positive, results.rules["gpt"].majority_total) == (4, 5)
    assert (results.rules["gemma"].majority_positive, results.rules["gemma"].majority_total) == (
        4, 5)  # fmt: skip
    apply_rule_verdicts(study)
    gpt.refresh_from_db()
    gemma.refresh_from_db()
    assert (gpt.validation_status, gemma.validation_status) == ("incorrect", "incorrect")
