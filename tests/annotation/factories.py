"""Factories for the annotation app's tests (part A)."""

from __future__ import annotations

import factory

from annotation.models import Annotator, Campaign
from annotation.services.campaigns import create_campaign
from annotation.services.enrollment import enroll
from tests.factories import UserFactory


class AnnotatorFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Annotator

    user = factory.SubFactory(UserFactory)
    native_language = "German"
    working_languages = factory.LazyFunction(lambda: ["English"])


class CampaignFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Campaign
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"Campaign {n}")
    protocol = "esa"
    src_lang = "en"
    tgt_lang = "de"
    overlap = 1


def esa_item(n: int, **extra) -> dict:
    return {
        "doc_id": extra.pop("doc_id", "doc-1"),
        "seg_id": n,
        "src_lang": "en",
        "tgt_lang": "de",
        "source": f"Source sentence number {n} is here.",
        "target": f"Zielsatz Nummer {n} ist hier.",
        "system": "sys",
        **extra,
    }


def choice_item(n: int, **extra) -> dict:
    return {
        "doc_id": "c",
        "seg_id": n,
        "source": f"Sentence {n} about art.",
        "choices": ["美術", "芸術", "アート"],
        "question": "Which word?",
        **extra,
    }


def esa_campaign(n_items: int = 3, **settings) -> Campaign:
    name = settings.pop("name", f"ESA {Campaign.objects.count() + 1}")
    return create_campaign(name, "esa", [esa_item(i) for i in range(1, n_items + 1)], **settings)


def enrolled(campaign: Campaign, name: str, **user_fields) -> Annotator:
    annotator = AnnotatorFactory(user=UserFactory(username=name, **user_fields))
    enroll(annotator, campaign)
    return annotator


def esa_answer(score: int = 80, spans=None) -> dict:
    return {"spans": spans or [{"start": 0, "end": 4, "severity": "minor"}], "score": score}
