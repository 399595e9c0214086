"""Offline demo data: one small campaign per protocol (ESA en→de, MQM en→ar, choice en→ja).

Idempotent: a campaign that already exists (by name) is left as it is.
"""

from __future__ import annotations

from annotation.models import Campaign
from annotation.selectors import describe_item_counts
from annotation.services.campaigns import create_campaign

ESA_NAME = "Demo ESA en→de"
MQM_NAME = "Demo MQM en→ar"
CHOICE_NAME = "Demo choice en→ja (lexical selection)"

_ESA_ITEMS = [
    ("news-1", 1, "The city council approved the new budget on Tuesday.",
     "Der Stadtrat hat am Dienstag den neuen Haushalt genehmigt."),
    ("news-1", 2, "Critics say the plan ignores rising rents.",
     "Kritiker sagen, der Plan ignoriert steigende Mieten."),
    ("news-1", 3, "The mayor promised more affordable housing by next spring.",
     "Der Bürgermeister versprach bis zum nächsten Frühling mehr bezahlbaren Wohnraum."),
    ("chat-1", 1, "Going back up tomorrow; we're doing stalls and coffin corner practice drills.",
     "Morgen geht's wieder hoch; wir machen Übungen zu Strömungsabrissen und der Sargecke."),
    ("chat-1", 2, "Break a leg at your audition!",
     "Brich dir ein Bein bei deinem Vorsprechen!"),
    ("chat-1", 3, "It's raining cats and dogs, so bring an umbrella.",
     "Es regnet Katzen und Hunde, also bring einen Regenschirm mit."),
]  # fmt: skip

_MQM_ITEMS = [
    ("office-1", 1, "The meeting was postponed until next week.",
     "تم تأجيل الاجتماع حتى الأسبوع المقبل."),
    ("office-1", 2, "Please send me the report by Friday.",
     "من فضلك أرسل لي التقرير بحلول يوم الجمعة."),
    ("travel-1", 1, "The museum opens at nine in the morning.",
     "يفتح المتحف أبوابه في التاسعة صباحاً."),
    ("travel-1", 2, "He forgot his umbrella on the train.",
     "نسي مظلته في القطار."),
]  # fmt: skip

_ART = ["美術", "芸術"]
_CHOICE_ITEMS = [
    ("And there began to be a real difference at this point between the art of improvisation "
     "and the art of composition.", "芸術"),
    ("We spent the afternoon at the art museum looking at paintings.", "美術"),
    ("She studied art history and sculpture at university.", "美術"),
    ("Art adds colour to life.", "芸術"),
]  # fmt: skip


def _esa_items() -> list[dict]:
    items = [
        {"doc_id": doc, "seg_id": seg, "src_lang": "en", "tgt_lang": "de", "source": source,
         "target": target, "system": "demo-mt", "origin": "demo"}
        for doc, seg, source, target in _ESA_ITEMS
    ]  # fmt: skip
    corrupted = "Der Stadtrat hat am Dienstag den alten Regenschirm genehmigt."
    start = corrupted.index("alten Regenschirm")
    items.append(
        {"doc_id": "news-1", "seg_id": "1-check", "src_lang": "en", "tgt_lang": "de",
         "source": _ESA_ITEMS[0][2], "target": corrupted, "system": "demo-mt",
         "kind": "attention_check", "origin": "demo",
         "expected": {"score_max": 66, "spans": [{"start": start, "end": start + 17}]}}
    )  # fmt: skip
    return items


def _mqm_items() -> list[dict]:
    return [
        {"doc_id": doc, "seg_id": seg, "src_lang": "en", "tgt_lang": "ar", "source": source,
         "target": target, "system": "demo-mt", "origin": "demo"}
        for doc, seg, source, target in _MQM_ITEMS
    ]  # fmt: skip


def _choice_items() -> list[dict]:
    return [
        {"doc_id": "art", "seg_id": number, "src_lang": "en", "tgt_lang": "ja",
         "source": sentence, "choices": _ART,
         "question": "Which Japanese word is the best translation of “art” in this sentence?",
         "origin": "demo", "meta": {"concept": "art", "attested": attested}}
        for number, (sentence, attested) in enumerate(_CHOICE_ITEMS, start=1)
    ]  # fmt: skip


def load_demo(stdout) -> None:
    demos = [
        (ESA_NAME, "esa", _esa_items, {
            "overlap": 2,
            "instructions": "Mark every error in the translation (minor or major), add [MISSING] "
            "where something was left out, then score the translation from 0 to 100.",
        }),
        (MQM_NAME, "mqm", _mqm_items, {
            "overlap": 2,
            "instructions": "Mark each error, give its MQM category, subcategory and severity.",
        }),
        (CHOICE_NAME, "choice", _choice_items, {
            "overlap": 3,
            "instructions": "Answer as if you were translating the English sentence into "
            "Japanese.",
        }),
    ]  # fmt: skip
    for name, protocol, items, settings in demos:
        if Campaign.objects.filter(name=name).exists():
            stdout.write(f"annotation: {name!r} already there")
            continue
        campaign = create_campaign(name, protocol, items(), **settings)
        stdout.write(f"annotation: created {name!r} with {describe_item_counts(campaign)}")
