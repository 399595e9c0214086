"""Campaigns that recruit native speakers, and exclusive groups of campaigns (seed 004: two
studies per language, and nobody takes part in both)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError
from rest_framework.test import APIClient

from annotation.models import Annotator, Campaign, Enrollment
from annotation.refusals import Excluded
from annotation.services.campaigns import campaign_settings
from annotation.services.enrollment import join_campaign, set_enrollment_status
from tests.annotation.factories import AnnotatorFactory, enrolled, esa_campaign
from tests.annotation.test_campaign_settings import settings_post
from tests.annotation.test_concurrency import run_parallel
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

FORM = {
    "username": "parisa",
    "email": "",
    "password": "a long enough passphrase 42",
    "native_language": "fa",
    "working_languages": "en",
    "consent": "on",
}
PROLIFIC = {"PROLIFIC_PID": "5f1e2d3c4b5a", "STUDY_ID": "study9", "SESSION_ID": "sess1"}


def signup_url(campaign: Campaign) -> str:
    return f"/annotation/join/{campaign.slug}/"


# --- the requirement on the sign-up page ------------------------------------------------------


def test_the_signup_page_states_the_requirement(client):
    campaign = esa_campaign(1, required_native_languages=["fa"], required_working_languages=["en"])

    response = client.get(signup_url(campaign))

    assert response.status_code == 200
    assert "Native speakers of Persian (fa) who also work in English (en)." in (
        response.content.decode()
    )


def test_without_a_requirement_the_page_says_nothing_and_a_name_is_accepted(client):
    campaign = esa_campaign(1)

    page = client.get(signup_url(campaign)).content.decode()
    response = client.post(signup_url(campaign), {**FORM, "native_language": "Farsi"})

    assert "Who can take part" not in page
    assert response.status_code == 302
    assert Annotator.objects.get(user__username="parisa").native_language == "Farsi"


def test_a_native_speaker_signs_up_and_the_declaration_is_kept(client):
    campaign = esa_campaign(1, required_native_languages=["fa"])

    response = client.post(signup_url(campaign), FORM)

    assert response.status_code == 302
    annotator = Annotator.objects.get(user__username="parisa")
    assert (annotator.native_language, annotator.working_languages) == ("fa", ["en"])
    assert Enrollment.objects.get(annotator=annotator).campaign == campaign


def test_a_speaker_of_another_language_is_refused_and_nothing_is_written(client):
    campaign = esa_campaign(1, required_native_languages=["fa", "ja"])

    response = client.post(signup_url(campaign), {**FORM, "native_language": "de"})

    assert response.status_code == 422
    assert response.context["form"].errors["native_language"] == [
        "This campaign is for native speakers of fa or ja; you gave de as your native language."
    ]
    assert "you gave de as your native language" in response.content.decode()
    assert not get_user_model().objects.filter(username="parisa").exists()
    assert Enrollment.objects.count() == 0


def test_a_language_name_is_refused_with_a_hint_to_give_the_code(client):
    campaign = esa_campaign(1, required_native_languages=["fa"])

    response = client.post(signup_url(campaign), {**FORM, "native_language": "Farsi"})

    assert response.status_code == 422
    assert response.context["form"].errors["native_language"] == [
        "This campaign is for native speakers of fa. Give your native language as a language "
        "code such as fa (you gave 'Farsi')."
    ]


@pytest.mark.parametrize(
    ("required", "declared", "joins"),
    [(["fa"], "FA", True), (["pt"], "pt-BR", True), (["pt-BR"], "pt-br", True),
     (["pt-BR"], "pt", False), (["pt-BR"], "pt-PT", False)],
)  # fmt: skip
def test_case_and_region_subtags(client, required, declared, joins):
    campaign = esa_campaign(1, required_native_languages=required)

    response = client.post(signup_url(campaign), {**FORM, "native_language": declared})

    assert response.status_code == (302 if joins else 422)
    assert Enrollment.objects.filter(campaign=campaign).exists() is joins


def test_a_missing_working_language_is_refused_on_that_field(client):
    campaign = esa_campaign(1, required_native_languages=["fa"], required_working_languages=["en"])

    response = client.post(signup_url(campaign), {**FORM, "working_languages": "fr"})

    assert response.status_code == 422
    assert response.context["form"].errors["working_languages"] == [
        "This campaign needs annotators who also work in en; en is not among your languages "
        "(give them as codes, e.g. en)."
    ]
    assert Enrollment.objects.count() == 0


# --- logged-in users with a profile -----------------------------------------------------------


def test_a_profile_joins_with_its_languages_prefilled_and_the_new_declaration_kept(client):
    campaign = esa_campaign(1, required_native_languages=["fa"])
    annotator = AnnotatorFactory(native_language="Persian", working_languages=["en"])
    client.force_login(annotator.user)

    page = client.get(signup_url(campaign))
    refused = client.post(
        signup_url(campaign), {"native_language": "de", "working_languages": "en"}
    )
    annotator.refresh_from_db()
    unchanged = annotator.native_language
    joined = client.post(signup_url(campaign), {"native_language": "fa", "working_languages": "en"})

    assert page.context["form"]["native_language"].value() == "Persian"
    assert 'value="Persian"' in page.content.decode()
    assert refused.status_code == 422
    assert refused.context["form"].errors["native_language"] == [
        "This campaign is for native speakers of fa; you gave de as your native language."
    ]
    assert unchanged == "Persian"
    assert joined.status_code == 302
    annotator.refresh_from_db()
    assert annotator.native_language == "fa"
    assert Enrollment.objects.filter(campaign=campaign, annotator=annotator).count() == 1


def test_without_a_requirement_a_profile_still_joins_with_one_click(client):
    campaign = esa_campaign(1)
    annotator = AnnotatorFactory(native_language="German")
    client.force_login(annotator.user)

    response = client.post(signup_url(campaign), {})

    assert response.status_code == 302
    assert Enrollment.objects.filter(campaign=campaign, annotator=annotator).exists()


def test_a_later_requirement_does_not_lock_out_someone_already_enrolled(client):
    campaign = esa_campaign(1)
    annotator = enrolled(campaign, "early")
    campaign.required_native_languages = ["fa"]
    campaign.save()

    _annotator, enrollment = join_campaign(annotator.user, campaign, consent=True)

    assert enrollment.campaign == campaign


# --- Prolific ---------------------------------------------------------------------------------


def test_a_prolific_participant_who_does_not_meet_it_is_asked_to_return(client):
    campaign = esa_campaign(1, required_native_languages=["fa"])
    post = {**PROLIFIC, "native_language": "de", "working_languages": "en", "consent": "on"}

    response = client.post(signup_url(campaign), post)

    assert response.status_code == 422
    assert response.context["form"].errors["native_language"] == [
        "This campaign is for native speakers of fa; you gave de as your native language. "
        "You cannot take part in this study: please return it on Prolific."
    ]
    assert not Annotator.objects.filter(prolific_pid=PROLIFIC["PROLIFIC_PID"]).exists()
    assert Enrollment.objects.count() == 0


def test_a_prolific_participant_who_meets_it_starts_and_the_language_is_recorded(client):
    campaign = esa_campaign(1, required_native_languages=["fa"])
    post = {**PROLIFIC, "native_language": "fa", "working_languages": "en", "consent": "on"}

    response = client.post(signup_url(campaign), post)

    assert response.status_code == 302
    annotator = Annotator.objects.get(prolific_pid=PROLIFIC["PROLIFIC_PID"])
    assert (annotator.source, annotator.native_language) == ("prolific", "fa")
    assert Enrollment.objects.filter(campaign=campaign, annotator=annotator).exists()


def test_a_returning_prolific_participant_is_checked_against_the_new_study(client):
    earlier = esa_campaign(1)
    post = {**PROLIFIC, "native_language": "de", "working_languages": "en", "consent": "on"}
    assert client.post(signup_url(earlier), post).status_code == 302
    client.logout()
    campaign = esa_campaign(1, required_native_languages=["fa"])

    response = client.get(signup_url(campaign), PROLIFIC)

    assert response.status_code == 403
    assert response.context["text"] == (
        "This campaign is for native speakers of fa; you gave de as your native language. "
        "You cannot take part in this study: please return it on Prolific."
    )
    assert not Enrollment.objects.filter(campaign=campaign).exists()


# --- exclusive groups -------------------------------------------------------------------------


def two_studies(**extra) -> tuple[Campaign, Campaign]:
    rules = esa_campaign(1, name="fa rule validation", exclusive_group="fa-studies", **extra)
    selection = esa_campaign(1, name="fa lexical selection", exclusive_group="fa-studies", **extra)
    return rules, selection


@pytest.mark.parametrize("first_index", [0, 1])
def test_an_annotator_of_one_study_cannot_join_the_other_in_either_direction(first_index):
    studies = two_studies()
    first, second = studies[first_index], studies[1 - first_index]
    annotator = enrolled(first, "amir")

    with pytest.raises(Excluded) as refusal:
        join_campaign(annotator.user, second, consent=True)

    assert str(refusal.value) == (
        f"You already take part in “{first.name}”, and the same person may not take part in "
        f"both it and “{second.name}”."
    )
    assert not Enrollment.objects.filter(campaign=second).exists()


def test_the_refusal_is_shown_on_the_signup_page(client):
    rules, selection = two_studies()
    annotator = enrolled(rules, "amir")
    client.force_login(annotator.user)

    response = client.post(signup_url(selection), {})

    assert response.status_code == 422
    assert response.context["form"].non_field_errors() == [
        "You already take part in “fa rule validation”, and the same person may not take part "
        "in both it and “fa lexical selection”."
    ]
    assert not Enrollment.objects.filter(campaign=selection).exists()


def test_any_enrollment_status_excludes_and_other_groups_do_not():
    rules, selection = two_studies()
    elsewhere = esa_campaign(1, exclusive_group="ja-studies")
    ungrouped = esa_campaign(1)
    annotator = enrolled(rules, "amir")
    set_enrollment_status(Enrollment.objects.get(annotator=annotator), "rejected")

    with pytest.raises(Excluded):
        join_campaign(annotator.user, selection, consent=True)
    join_campaign(annotator.user, elsewhere, consent=True)
    join_campaign(annotator.user, ungrouped, consent=True)

    assert set(annotator.enrollments.values_list("campaign__name", flat=True)) == {
        rules.name, elsewhere.name, ungrouped.name,
    }  # fmt: skip


def test_the_same_prolific_id_in_the_second_study_is_refused(client):
    rules, selection = two_studies()
    post = {**PROLIFIC, "native_language": "fa", "working_languages": "en", "consent": "on"}
    assert client.post(signup_url(rules), post).status_code == 302
    client.logout()

    response = client.get(signup_url(selection), PROLIFIC)

    assert response.status_code == 403
    assert response.context["text"] == (
        "You already take part in “fa rule validation”, and the same person may not take part "
        "in both it and “fa lexical selection”. You cannot take part in this study: please "
        "return it on Prolific."
    )
    assert not Enrollment.objects.filter(campaign=selection).exists()


def test_one_prolific_id_is_one_annotator_so_no_second_account_can_carry_it():
    # The exclusion looks at the annotator; this constraint is what makes that cover a
    # PROLIFIC_PID used under any account.
    AnnotatorFactory(prolific_pid="5f1e2d3c4b5a", source="prolific")
    with pytest.raises(IntegrityError):
        AnnotatorFactory(user=UserFactory(username="other"), prolific_pid="5f1e2d3c4b5a")


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_joins_to_both_studies_enrol_once():
    rules, selection = two_studies()
    annotator = AnnotatorFactory()
    user = annotator.user

    results = run_parallel(
        [lambda c=c: join_campaign(user, c, consent=True) for c in (rules, selection)]
    )

    assert Enrollment.objects.filter(annotator=annotator).count() == 1
    refusals = [r for r in results if isinstance(r, Exception)]
    assert len(refusals) == 1, results


# --- staff: settings form and API -------------------------------------------------------------


def test_the_settings_form_standardizes_codes_and_shows_them(admin_client):
    campaign = esa_campaign(1)
    url = f"/annotation/campaigns/{campaign.pk}/settings/"

    response = admin_client.post(
        url,
        settings_post(
            campaign,
            required_native_languages="FA, pt-br",
            required_working_languages="en",
            exclusive_group="fa-studies",
        ),
    )

    assert response.status_code == 302
    campaign.refresh_from_db()
    assert campaign.required_native_languages == ["fa", "pt-BR"]
    assert campaign.required_working_languages == ["en"]
    assert campaign.exclusive_group == "fa-studies"
    assert 'value="fa, pt-BR"' in admin_client.get(url).content.decode()


def test_the_settings_form_refuses_bad_codes_and_groups_and_saves_nothing(admin_client):
    campaign = esa_campaign(1)

    response = admin_client.post(
        f"/annotation/campaigns/{campaign.pk}/settings/",
        settings_post(
            campaign, required_native_languages="fa, Farsi", exclusive_group="fa studies"
        ),
    )

    assert response.status_code == 422
    errors = response.context["form"].errors
    assert errors["required_native_languages"] == [
        "not a language code: 'Farsi' (e.g. en, fa, pt-BR)"
    ]
    assert "exclusive_group" in errors
    campaign.refresh_from_db()
    assert (campaign.required_native_languages, campaign.exclusive_group) == ([], "")


def test_the_campaign_page_names_the_requirement_and_the_other_studies(admin_client):
    rules, selection = two_studies(required_native_languages=["fa"])

    page = admin_client.get(f"/annotation/campaigns/{rules.pk}/").content.decode()

    assert "Native speakers of Persian (fa)." in page
    assert f'href="/annotation/campaigns/{selection.pk}/">fa lexical selection</a>' in page


def test_api_import_takes_the_settings_and_shows_them(admin_user):
    api = APIClient()
    api.force_authenticate(admin_user)
    settings = {
        "required_native_languages": ["FA"],
        "required_working_languages": ["en"],
        "exclusive_group": "fa-studies",
    }
    jsonl = '{"doc_id": "d", "seg_id": "1", "source": "Hi", "target": "Salam"}\n'

    response = api.post(
        "/api/campaigns/import/",
        {"name": "fa API", "protocol": "esa", "jsonl": jsonl, "settings": settings},
        format="json",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert {key: body[key] for key in settings} == {**settings, "required_native_languages": ["fa"]}
    listed = api.get(f"/api/campaigns/{body['id']}/").json()
    assert listed["exclusive_group"] == "fa-studies"


@pytest.mark.parametrize(
    ("setting", "value"),
    [("required_native_languages", ["Farsi"]), ("required_working_languages", "en"),
     ("exclusive_group", "not a slug")],
)  # fmt: skip
def test_api_import_refuses_a_bad_setting_naming_the_field(admin_user, setting, value):
    api = APIClient()
    api.force_authenticate(admin_user)
    jsonl = '{"doc_id": "d", "seg_id": "1", "source": "Hi", "target": "Salam"}\n'

    response = api.post(
        "/api/campaigns/import/",
        {"name": "bad", "protocol": "esa", "jsonl": jsonl, "settings": {setting: value}},
        format="json",
    )

    assert response.status_code == 400
    assert setting in response.json()
    assert not Campaign.objects.filter(name="bad").exists()


def test_the_new_fields_are_import_settings():
    assert {
        "required_native_languages", "required_working_languages", "exclusive_group"
    } <= campaign_settings()  # fmt: skip


def test_django_admin_edits_the_fields_and_refuses_a_bad_code(admin_client):
    campaign = esa_campaign(1)
    url = f"/admin/annotation/campaign/{campaign.pk}/change/"
    page = admin_client.get(url)
    form = page.context["adminform"].form
    data = {
        name: value
        for name, value in (
            (name, form.initial.get(name, field.initial)) for name, field in form.fields.items()
        )
        if value is not None and value is not False
    }

    refused = admin_client.post(url, {**data, "required_native_languages": '["Farsi"]'})
    saved = admin_client.post(
        url,
        {**data, "required_native_languages": '["fa"]', "exclusive_group": "fa-studies"},
    )

    assert "required_native_languages" in page.content.decode()
    assert refused.status_code == 200
    assert refused.context["adminform"].form.errors["required_native_languages"] == [
        "not a language code: 'Farsi' (e.g. en, fa, pt-BR)"
    ]
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    campaign.refresh_from_db()
    assert (campaign.required_native_languages, campaign.exclusive_group) == (["fa"], "fa-studies")
