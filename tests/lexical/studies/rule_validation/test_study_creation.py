"""Creating a rule-validation study: its campaign, items, questions, checks, and refusals."""

from __future__ import annotations

import pytest

from annotation.models import Campaign, Item
from lexical.models import Concept, Rule, RuleValidationStudy, Variation
from lexical.studies.rule_validation.services import StudyConfigError, create_study
from tests.lexical.studies.rule_validation.helpers import make_rule_job, make_study, make_world

pytestmark = pytest.mark.django_db


def test_study_has_one_questionnaire_item_per_concept_with_three_families():
    study = make_study()
    campaign = study.campaign
    assert (campaign.protocol, campaign.overlap, campaign.shuffle_items) == (
        "questionnaire", 3, True,
    )  # fmt: skip
    assert (campaign.src_lang, campaign.tgt_lang) == ("en", "es")
    regular = campaign.items.filter(kind=Item.Kind.REGULAR).order_by("position")
    trip = Concept.objects.get(lemma="trip")
    item = regular.get(origin_ref=str(trip.pk))
    assert item.origin == "lexical_rule_validation"
    assert item.source == "trip (NOUN)"
    recall, precision, *rules = item.questions
    assert (recall["id"], recall["family"], recall["type"]) == ("recall", "recall", "yes_no")
    assert recall["prompt"].startswith("Is any variation of “trip” missing from this list")
    labels = [v.label for v in trip.variations.all()]
    # Each listed word is isolated, so an RTL list keeps its order inside the English prompt.
    assert recall["prompt"].endswith(": " + ", ".join(f"\u2068{w}\u2069" for w in labels) + "?")
    assert precision["family"] == "precision" and precision["type"] == "multiple"
    assert precision["prompt"] == "Which of these listed words do NOT mean “trip”?"
    assert precision["options"] == labels == ["excursión", "recorrido", "viaje/viajes"]
    assert item.meta["variation_ids"] == [v.pk for v in trip.variations.all()]
    # 3 variations × 2 generators; rule questions name no generator.
    assert len(rules) == 6 and {q["family"] for q in rules} == {"rules"}
    assert all("gpt" not in q["prompt"] and "gemma" not in q["prompt"] for q in rules)
    for question in rules:
        meta = item.meta["rules"][question["id"]]
        rule = Rule.objects.get(pk=meta["rule_id"])
        assert question["id"] == f"rule-{rule.pk}"
        assert meta["generator"] == rule.generator
        assert (
            question["prompt"]
            == f"Is this rule correct? “\u2068{rule.variation.label}\u2069”: {rule.text}"
        )
    assert regular.count() == 2
    assert study.params["concepts"] == 2
    assert set(study.rule_jobs.values_list("engine", flat=True)) == {"gpt", "gemma"}


def test_attention_checks_list_another_concepts_word_which_must_be_marked():
    study = make_study(attention_checks=3, seed=5)
    checks = study.campaign.items.filter(kind=Item.Kind.ATTENTION_CHECK)
    assert checks.count() == 3
    for check in checks:
        concept = Concept.objects.get(pk=check.meta["concept_id"])
        own = {v.label for v in concept.variations.all()}
        options = check.questions[1]["options"]
        intruder = check.meta["intruder"]
        assert intruder in options and intruder not in own
        assert len(options) == 3 and set(options) - {intruder} <= own
        assert check.expected["answers"] == {"precision": [options.index(intruder)]}
        assert {q["family"] for q in check.questions} == {"recall", "precision"}


def test_no_checks_when_asked_for_none_and_sampling_is_reproducible():
    job, rule_jobs = make_world()
    config = {"mining_job": job.pk, "rule_jobs": [rule_jobs[0].pk], "max_concepts": 1,
              "attention_checks": 0}  # fmt: skip
    picks = set()
    for name in ("A", "B"):
        study = create_study(config | {"name": name, "seed": 11})
        assert not study.campaign.items.filter(kind=Item.Kind.ATTENTION_CHECK).exists()
        picks.add(study.campaign.items.get().origin_ref)
    assert len(picks) == 1


def test_concepts_of_a_target_language_and_dropped_variations_are_not_listed():
    _, rule_jobs = make_world()
    Variation.objects.filter(lemma="excursion").update(dropped=True)
    study = create_study(
        {
            "name": "By language",
            "tgt_lang": "es",
            "rule_jobs": [rule_jobs[1].pk],
            "overlap": 2,
            "attention_checks": 0,
        }
    )
    assert study.mining_job is None and study.campaign.overlap == 2
    trip = study.campaign.items.get(meta__concept="trip")
    assert trip.questions[1]["options"] == ["recorrido", "viaje/viajes"]
    assert len(trip.questions) == 2 + 2


def test_a_concept_with_a_single_listed_variation_is_left_out_and_said_so():
    job, rule_jobs = make_world()
    date = Concept.objects.get(lemma="date")
    date.variations.filter(lemma="khorma").update(dropped=True)
    study = create_study(
        {
            "name": "S",
            "mining_job": job.pk,
            "rule_jobs": [rule_jobs[0].pk],
            "attention_checks": 0,
        }
    )
    assert study.params["left_out"]["too_few_variations"] == [date.pk]
    assert study.campaign.items.count() == 1


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"name": ""}, "name", "give the campaign a name"),
        ({"name": "a\x00b"}, "name", "control characters"),
        ({"mining_job": None, "tgt_lang": "e\x00s"}, "tgt_lang", "language code"),
        ({"seed": -1}, "seed", "whole number"),
        ({"max_concepts": 1.5}, "max_concepts", "whole number"),
        ({"rule_jobs": []}, "rule_jobs", "choose at least one rule job"),
        ({"rule_jobs": [999999]}, "rule_jobs", "no rule job #999999"),
        ({"rule_jobs": "1"}, "rule_jobs", "must be a list of ids"),
        ({"mining_job": 999999}, "mining_job", "no mining job #999999"),
        ({"mining_job": None}, "mining_job", "choose a mining job"),
        ({"overlap": 0}, "overlap", "must be from 1 to 20"),
        ({"overlap": "many"}, "overlap", "whole number"),
        ({"max_concepts": 1, "attention_checks": 2}, "attention_checks", "at least 2 concepts"),
    ],
)
def test_refusals_name_the_field_and_create_nothing(change, field, message):
    job, rule_jobs = make_world()
    config = {"name": "Refused", "mining_job": job.pk, "rule_jobs": [j.pk for j in rule_jobs]}
    with pytest.raises(StudyConfigError) as caught:
        create_study(config | change)
    assert message in caught.value.errors[field]
    assert not Campaign.objects.exists() and not RuleValidationStudy.objects.exists()


def test_refused_without_concepts_without_rules_or_with_a_taken_name():
    job, rule_jobs = make_world()
    config = {"name": "X", "mining_job": job.pk, "rule_jobs": [rule_jobs[0].pk]}
    create_study(config)
    with pytest.raises(StudyConfigError, match="a campaign named 'X' already exists"):
        create_study(config)
    with pytest.raises(StudyConfigError, match="no active concept"):
        create_study(config | {"name": "Y", "mining_job": None, "tgt_lang": "fi"})
    empty = make_rule_job(job, "empty")
    empty.rules.all().delete()
    with pytest.raises(StudyConfigError, match="wrote no rule"):
        create_study(config | {"name": "Z", "rule_jobs": [empty.pk]})
    assert RuleValidationStudy.objects.count() == 1 and Campaign.objects.count() == 1
