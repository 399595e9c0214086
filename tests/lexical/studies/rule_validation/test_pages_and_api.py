"""The study pages, API and CSV: refusals change nothing, outsiders see nothing, formulas are
defused."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.models import Campaign
from formats.spreadsheet import guard_cell
from lexical.models import RuleValidationStudy
from lexical.studies.rule_validation.export import results_csv
from lexical.studies.rule_validation.selectors import study_results
from lexical.studies.rule_validation.services import create_study
from tests.factories import UserFactory
from tests.lexical.studies.rule_validation.helpers import make_rule_job, make_study, make_world

pytestmark = pytest.mark.django_db


def test_form_refusal_is_a_400_naming_the_field_and_creates_nothing(admin_client):
    job, rule_jobs = make_world()
    Campaign.objects.create(name="Taken", protocol="questionnaire", slug="taken")
    response = admin_client.post(
        "/lexical/rule-validation/new/",
        {"name": "Taken", "mining_job": job.pk, "rule_jobs": [rule_jobs[0].pk], "seed": 0,
         "overlap": 3, "attention_checks": 2},
    )  # fmt: skip
    assert response.status_code == 400
    assert "a campaign named &#x27;Taken&#x27; already exists" in response.content.decode()
    assert not RuleValidationStudy.objects.exists()


def test_list_page_home_link_and_new_form_render(admin_client):
    study = make_study(name="Listed")
    listing = admin_client.get("/lexical/rule-validation/").content.decode()
    assert f'href="/lexical/rule-validation/{study.pk}/">Rule validation #{study.pk}</a>' in listing
    assert "Listed" in listing
    home = admin_client.get("/lexical/").content.decode()
    assert 'href="/lexical/rule-validation/">Rule-validation studies</a>' in home
    form = admin_client.get("/lexical/rule-validation/new/")
    assert form.status_code == 200 and "Rules #" in form.content.decode()


def test_outsiders_see_nothing(client):
    study = make_study()
    client.force_login(UserFactory(username="plain"))
    assert client.get(f"/lexical/rule-validation/{study.pk}/").status_code == 302
    api = APIClient()
    api.force_authenticate(UserFactory(username="other"))
    assert api.get(f"/api/lexical-rule-validations/{study.pk}/").status_code == 403


def test_api_create_and_refuse(admin_user):
    job, rule_jobs = make_world()
    api = APIClient()
    api.force_authenticate(admin_user)
    body = {"name": "API study", "mining_job": job.pk, "rule_jobs": [rule_jobs[0].pk]}
    created = api.post("/api/lexical-rule-validations/", body, format="json")
    assert created.status_code == 201
    assert created.json()["params"]["concepts"] == 2
    refused = api.post(
        "/api/lexical-rule-validations/", body | {"name": "B", "overlap": 99}, format="json"
    )
    assert refused.status_code == 400
    assert refused.json()["errors"] == {"overlap": "must be from 1 to 20, got 99"}
    assert api.post("/api/lexical-rule-validations/", [1], format="json").status_code == 400
    assert RuleValidationStudy.objects.count() == 1


def test_csv_defuses_formula_cells_and_lists_every_table():
    assert [guard_cell(v) for v in ("=SUM(A1)", "+A1", "-x", "@me", "gpt", 0.5, "-0.5")] == [
        "'=SUM(A1)", "'+A1", "'-x", "'@me", "gpt", 0.5, "-0.5",
    ]  # fmt: skip
    job, _ = make_world()
    hostile = make_rule_job(job, "=HYPERLINK(1)")
    study = create_study({"name": "CSV", "mining_job": job.pk, "rule_jobs": [hostile.pk]})
    text = results_csv(study_results(study))
    lines = text.splitlines()
    assert lines[0] == "table,row,measure,value,positive,total,ties"
    # No answers yet: every share is empty, rules still listed per generator.
    assert "table1_mined_variations,precision,micro,,0,0," in lines
    assert "table3_correct_rules,'=HYPERLINK(1),majority,,0,0,0" in lines
    assert "tables4_6_agreement,rules,pabak,,,0," in lines
    assert len(lines) == 1 + 4 + 2 + 9
