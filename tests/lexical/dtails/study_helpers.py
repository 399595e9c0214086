"""A finished lexical-selection study built through the annotation services, following the item
contract of the selection study (LEXICAL_STUDIES.md): three items, a tie, an attention check and
one annotator who fails it."""

from __future__ import annotations

from annotation.models import Campaign, Item
from annotation.services.campaigns import create_campaign
from tests.annotation.campaign_builders import make_annotator, work

CHOICES = ["cita", "dátil", "fecha"]


def study_item(n: int, source: str, attested: str, target: str) -> dict:
    return {
        "doc_id": "concept-7",
        "seg_id": f"example-{n}",
        "src_lang": "en",
        "tgt_lang": "es",
        "source": source,
        "target": "",
        "question": 'Which word fits "date" here?',
        "choices": CHOICES,
        "origin": "lexical_selection",
        "origin_ref": str(n),
        "meta": {
            "concept_id": 7, "concept": "date", "pos": "NOUN", "attested": attested,
            "target_text": target, "source_highlight": [0, 4],
        },
    }  # fmt: skip


ITEMS = [
    study_item(1, "She brings me dried dates.", "dátil", "Me trae dátiles secos."),
    study_item(2, "Save the date, friends.", "fecha", "Reserva la fecha, amigos."),
    study_item(3, "=HYPERLINK(date)", "cita", "=HYPERLINK(cita)"),
]
CHECK = {**study_item(9, "What is the date today? (choose fecha)", "fecha", "x"),
         "kind": "attention_check", "expected": "fecha", "origin": ""}  # fmt: skip

# Votes per annotator and seg_id. "eve" fails the attention check, so her votes do not count.
VOTES = {
    "ana": {"example-1": "dátil", "example-2": "dátil", "example-3": "cita", "example-9": "fecha"},
    "bo": {"example-1": "dátil", "example-2": "fecha", "example-3": "cita", "example-9": "fecha"},
    "cy": {"example-1": "fecha", "example-2": "cita", "example-3": "cita", "example-9": "fecha"},
    "eve": {"example-1": "fecha", "example-2": "fecha", "example-3": "fecha", "example-9": "cita"},
}
CONFIDENCE = {"ana": 3, "bo": 2, "cy": 1, "eve": 3}


def finished_study(name: str = "Lexical study es", tie_rule: str = "no_majority") -> Campaign:
    campaign = create_campaign(
        name, "choice", [*ITEMS, CHECK], overlap=4, ask_confidence=True, tie_rule=tie_rule,
        src_lang="en", tgt_lang="es", qc_min_checks=1, qc_min_seconds_per_item=0,
    )  # fmt: skip
    for who, votes in VOTES.items():

        def answer(item: Item, votes=votes, who=who) -> dict:
            return {
                "selected": [item.choices.index(votes[item.seg_id])],
                "confidence": CONFIDENCE[who],
            }

        work(make_annotator(who), campaign, answer)
    return campaign
