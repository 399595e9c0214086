"""Agreement per question family (seed 004 Tables 4–6), by hand, and on the dashboard."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation import agreement, progress
from annotation.agreement import family_agreement
from annotation.services.campaigns import create_campaign
from tests.annotation.campaign_builders import make_annotator, work


def test_yes_no_family_by_hand():
    # Units (no, yes) counts: (0,3) (1,2) (3,0) (2,1).
    # Total agreement 2/4. P_i = 1, 1/3, 1, 1/3 → P̄ = 2/3; p = (1/2, 1/2) → P_e = 1/2;
    # κ = (2/3 − 1/2) / (1/2) = 1/3. PABAK = 2 · 0.5 − 1 = 0.
    answers = {
        ("i1", "rule"): ["yes", "yes", "yes"],
        ("i2", "rule"): ["yes", "yes", "no"],
        ("i3", "rule"): ["no", "no", "no"],
        ("i4", "rule"): ["yes", "no", "no"],
    }
    result = family_agreement("rule_correct", "yes_no", answers)
    assert result == agreement.FamilyAgreement(
        family="rule_correct", question_type="yes_no", n_item_questions=4, n_units=4,
        n_categories=2, total_agreement=0.5, fleiss_kappa=0.333333, pabak=0.0,
    )  # fmt: skip


def test_single_choice_family_by_hand_uses_k_options():
    # Counts over options (0, 1, 2): (3,0,0) (1,1,1) (0,1,2).
    # P_i = 1, 0, 1/3 → P̄ = 4/9; p = (4/9, 2/9, 3/9) → P_e = 29/81; κ = (36 − 29)/(81 − 29)
    # = 7/52. Total agreement 1/3; PABAK with k = 3: (3 · 1/3 − 1)/2 = 0.
    answers = {("a", "q"): [0, 0, 0], ("b", "q"): [0, 1, 2], ("c", "q"): [2, 2, 1]}
    result = family_agreement("best", "single", answers, {unit: 3 for unit in answers})
    assert result.n_categories == 3
    assert result.total_agreement == 0.333333
    assert result.fleiss_kappa == pytest.approx(7 / 52, abs=1e-6)
    assert result.pabak == 0.0


def test_multiple_choice_family_is_judged_option_by_option_none_selecting_nothing():
    # Decisions (option chosen?): a/0 (T,T), a/1 (F,F), b/0 (F,F), b/1 (F,T): 3 of 4 unanimous.
    # P_i = 1, 1, 1, 0 → P̄ = 3/4; p = (5/8, 3/8) → P_e = 17/32; κ = (24 − 17)/(32 − 17) = 7/15.
    # PABAK = 2 · 3/4 − 1 = 1/2.
    answers = {("a", "wrong"): [[0], [0]], ("b", "wrong"): ["none", [1]]}
    result = family_agreement("wrong", "multiple", answers, {unit: 2 for unit in answers})
    assert (result.n_item_questions, result.n_units, result.n_categories) == (2, 4, 2)
    assert result.total_agreement == 0.75
    assert result.fleiss_kappa == pytest.approx(7 / 15, abs=1e-6)
    assert result.pabak == 0.5


def test_generalised_pabak_matches_the_formula():
    # k = 4 options, P_o = 3/4 → (4 · 0.75 − 1)/3 = 2/3.
    answers = {(n, "q"): [1, 1] for n in range(3)} | {(9, "q"): [0, 3]}
    result = family_agreement("f", "single", answers, {unit: 4 for unit in answers})
    assert result.pabak == pytest.approx(2 / 3, abs=1e-6)


def test_unanimous_single_category_has_undefined_kappa_and_units_under_two_answers_skip():
    answers = {("a", "q"): ["yes", "yes"], ("b", "q"): ["yes", "yes"], ("c", "q"): ["no"]}
    result = family_agreement("f", "yes_no", answers)
    assert (result.n_units, result.total_agreement, result.fleiss_kappa, result.pabak) == (
        2, 1.0, None, 1.0,
    )  # fmt: skip


def test_no_answers_gives_no_statistics_and_unknown_types_are_refused():
    assert family_agreement("f", "yes_no", {}).total_agreement is None
    with pytest.raises(ValueError, match="unknown question type 'scale'"):
        family_agreement("f", "scale", {})


ITEMS = [
    {"source": f"concept {n}", "seg_id": str(n), "questions": [
        {"id": "missing", "family": "missing_variation", "type": "yes_no", "prompt": "Missing?"},
        {"id": "rule-1", "family": "rule_correct", "type": "yes_no", "prompt": "Rule 1?"},
        {"id": "rule-2", "family": "rule_correct", "type": "yes_no", "prompt": "Rule 2?"},
    ]}
    for n in (1, 2)
]  # fmt: skip


@pytest.mark.django_db
def test_dashboard_and_api_show_agreement_per_family(admin_client, admin_user):
    campaign = create_campaign("Families", "questionnaire", ITEMS, overlap=2)
    given = {
        "a": {"missing": "no", "rule-1": "yes", "rule-2": "yes"},
        "b": {"missing": "no", "rule-1": "yes", "rule-2": "no"},
    }
    for name, answers in given.items():
        work(make_annotator(name), campaign, lambda item, a=answers: {"answers": a})
    families = {row.family: row for row in progress.campaign_agreement(campaign).families}
    assert set(families) == {"missing_variation", "rule_correct"}
    assert (families["missing_variation"].n_units, families["missing_variation"].pabak) == (2, 1.0)
    # rule_correct: 4 decisions (2 items × 2 rules), those on rule-2 disagree: P_o = 1/2;
    # P̄ = 1/2, p = (1/4, 3/4) → P_e = 5/8, κ = (1/2 − 5/8)/(3/8) = −1/3.
    assert families["rule_correct"].n_units == 4
    assert families["rule_correct"].total_agreement == 0.5
    assert families["rule_correct"].fleiss_kappa == -0.333333
    assert families["rule_correct"].pabak == 0.0
    html = admin_client.get(f"/annotation/dashboard/{campaign.pk}/").content.decode()
    assert 'id="family-agreement"' in html
    assert '<td>rule_correct</td><td>yes_no</td><td class="num">4</td>' in html
    api = APIClient()
    api.force_authenticate(admin_user)
    body = api.get(f"/api/campaigns/{campaign.pk}/progress/").json()
    assert body["family_agreement"][1] == {
        "family": "rule_correct", "question_type": "yes_no", "n_item_questions": 4,
        "n_units": 4, "n_categories": 2, "total_agreement": 0.5, "fleiss_kappa": -0.333333,
        "pabak": 0.0,
    }  # fmt: skip
