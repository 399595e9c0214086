"""Who may join a seed 004 study (lexical.recruiting): native speakers of the target language by
default, and with one_study_per_person a person takes only one of a language's two studies."""

from __future__ import annotations

import re

import pytest
from django.db import transaction

from annotation.models import Annotator, Enrollment
from annotation.refusals import Excluded, NotAllowed
from annotation.services.enrollment import admit
from lexical.models import ExampleSelection
from lexical.recruiting import exclusive_group, recruiting_settings
from tests.annotation.campaign_builders import make_annotator
from tests.lexical.studies.rule_validation.helpers import make_study as make_rule_study
from tests.lexical.studies.selection_study.helpers import make_study, make_study_selection

pytestmark = pytest.mark.django_db


def _speaker(name: str, native: str) -> Annotator:
    annotator = make_annotator(name)
    annotator.native_language = native
    annotator.save(update_fields=["native_language"])
    return annotator


def _spanish_selection() -> ExampleSelection:
    selection = make_study_selection("Spanish study")
    ExampleSelection.objects.filter(pk=selection.pk).update(tgt_lang="es")
    selection.refresh_from_db()
    return selection


def test_settings_name_the_language_and_one_group_per_language():
    assert recruiting_settings("pt-BR", native_speakers=True, one_study_per_person=True) == {
        "required_native_languages": ["pt-BR"],
        "exclusive_group": "lexical-pt-br",
    }
    assert recruiting_settings("es", native_speakers=False, one_study_per_person=False) == {
        "required_native_languages": [],
        "exclusive_group": "",
    }
    assert exclusive_group("es") != exclusive_group("fa")


def test_both_studies_require_native_speakers_by_default_and_refuse_others():
    rules = make_rule_study("Rules es").campaign
    choices = make_study().campaign  # Farsi
    assert rules.required_native_languages == ["es"] and rules.exclusive_group == ""
    assert choices.required_native_languages == ["fa"] and choices.exclusive_group == ""
    with pytest.raises(NotAllowed), transaction.atomic():
        admit(_speaker("en1", "en"), rules)
    assert admit(_speaker("es1", "es"), rules).campaign == rules
    assert not Enrollment.objects.filter(annotator__pseudonym="ann-en1").exists()


def test_native_speakers_off_lets_anyone_join():
    campaign = make_study(native_speakers=False).campaign
    assert campaign.required_native_languages == []
    assert admit(_speaker("en2", "en"), campaign).campaign == campaign


def test_one_study_per_person_keeps_a_speaker_out_of_the_other_study_of_the_language():
    rules = make_rule_study("Rules es", one_study_per_person=True).campaign
    choices = make_study(_spanish_selection(), one_study_per_person=True).campaign
    assert rules.exclusive_group == choices.exclusive_group == "lexical-es"
    speaker = _speaker("es2", "es")
    admit(speaker, rules)
    with pytest.raises(Excluded, match="Rules es"), transaction.atomic():
        admit(speaker, choices)
    assert admit(_speaker("es3", "es"), choices).campaign == choices


def test_a_non_boolean_setting_is_refused_by_name():
    from lexical.studies.rule_validation.services import StudyConfigError

    with pytest.raises(StudyConfigError) as refused:
        make_rule_study("Rules es", native_speakers="yes")
    assert "native_speakers" in refused.value.errors


def test_the_api_and_forms_carry_the_choice(admin_client):
    selection = make_study_selection("API study")
    response = admin_client.post(
        "/api/lexical-selection-studies/",
        {"selection": selection.pk, "name": "API study", "one_study_per_person": True},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["campaign"]
    from annotation.models import Campaign

    campaign = Campaign.objects.get(name="API study")
    assert campaign.exclusive_group == "lexical-fa"
    assert campaign.required_native_languages == ["fa"]
    page = admin_client.get("/lexical/rule-validation/new/")
    assert b"Only native speakers of the target language" in page.content
    page = admin_client.get("/lexical/selection-studies/new/")
    assert b"One study of this language per person" in page.content


@pytest.mark.parametrize(
    "url", ["/lexical/rule-validation/new/", "/lexical/selection-studies/new/"]
)
def test_both_study_forms_tick_one_study_per_person_and_keep_its_help_text_off_the_box(
    admin_client, url
):
    html = admin_client.get(url).content.decode()
    box = re.search(r'<input type="checkbox" name="one_study_per_person"[^>]*>', html)
    assert box is not None and " checked" in box.group(0)
    # The help text follows the label, not the input: Pico pulls an input's next <small> up
    # over it (it covered the box).
    after_box = html[box.end() :]
    label_end, help_at = after_box.index("</label>"), after_box.index("and the other way round.")
    assert label_end < help_at
    assert after_box[:label_end].strip() == "One study of this language per person"
