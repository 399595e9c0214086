"""Build campaigns with submitted work through the annotation services (part B's tests).

Everything goes through the public services (create_campaign, enroll, next_item_for,
start_viewing, submit_annotation), so the rows look exactly like the ones real annotators make;
times are passed explicitly so exports are reproducible (golden files).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from annotation.models import Annotator, Campaign, Item
from annotation.services.campaigns import create_campaign
from annotation.services.claims import next_item_for
from annotation.services.enrollment import enroll
from annotation.services.submissions import start_viewing, submit_annotation
from tests.factories import UserFactory

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def make_annotator(name: str) -> Annotator:
    """An annotator whose real name, username and email must never reach an export."""
    existing = Annotator.objects.filter(pseudonym=f"ann-{name}").first()
    if existing is not None:
        return existing
    user = UserFactory(
        username=f"user-{name}",
        email=f"{name}.private@example.org",
        first_name="Realname",
        last_name=name.capitalize(),
    )
    return Annotator.objects.create(
        user=user, pseudonym=f"ann-{name}", display_name=f"Secret {name.capitalize()}"
    )


def work(
    annotator: Annotator,
    campaign: Campaign,
    answer_for: Callable[[Item], dict | None],
    *,
    start: datetime = T0,
    seconds: float = 12.0,
) -> int:
    """Enrol, then take items with next_item_for and submit ``answer_for(item)`` until done.

    ``answer_for`` returning ``None`` leaves that item as an unsubmitted draft and stops.
    Returns the number of submissions.
    """
    enroll(annotator, campaign)
    now = start
    done = 0
    while True:
        item = next_item_for(annotator, campaign, now=now)
        if item is None:
            return done
        start_viewing(annotator, item, now=now)
        answer = answer_for(item)
        if answer is None:
            return done
        now += timedelta(seconds=seconds)
        submit_annotation(annotator, item, answer, now=now)
        done += 1
        now += timedelta(seconds=1)


def esa_campaign(name: str = "ESA demo", overlap: int = 2) -> Campaign:
    items = [
        {"doc_id": "doc-a", "seg_id": "1", "source": "The cat sat.", "target": "Kočka seděla.",
         "system": "sysA", "origin": "search", "origin_ref": "run-1/1", "meta": {"topic": "pets"}},
        {"doc_id": "doc-a", "seg_id": "2", "source": "It rained\tall day.",
         "target": "Celý den\tpršelo.", "system": "sysA", "origin": "search",
         "origin_ref": "run-1/2", "meta": {}},
        {"doc_id": "doc-b", "seg_id": "1", "source": "Hello, world!", "target": "Ahoj, světe!",
         "system": "sysB", "origin": "", "origin_ref": "", "meta": {"note": "émoji 🙂"}},
    ]  # fmt: skip
    return create_campaign(name, "esa", items, src_lang="en", tgt_lang="cs", overlap=overlap)


def mqm_campaign(name: str = "MQM demo", overlap: int = 1) -> Campaign:
    items = [
        {"doc_id": "doc-a", "seg_id": "1", "source": "The red car.", "target": "Das rote Auto.",
         "system": "sysA"},
        {"doc_id": "doc-a", "seg_id": "2", "source": "Good morning.", "target": "Guten Morgen.",
         "system": "sysA"},
        {"doc_id": "doc-b", "seg_id": "7", "source": "Stop!", "target": "Stopp!", "system": "sysB"},
        {"doc_id": "doc-b", "seg_id": "8", "source": "I like tea very much.",
         "target": "Ich mag Tee.", "system": "sysB"},
    ]  # fmt: skip
    return create_campaign(name, "mqm", items, src_lang="en", tgt_lang="de", overlap=overlap)


def choice_campaign(name: str = "Choice demo", overlap: int = 3, multi: bool = False) -> Campaign:
    items = [
        {"source": f"Which word fits sentence {n}?", "question": "Best variation?",
         "choices": ["yes", "no", "maybe"], "origin": "lexical", "origin_ref": f"concept-{n}"}
        for n in range(1, 5)
    ]  # fmt: skip
    return create_campaign(
        name, "choice", items, src_lang="en", tgt_lang="ja", overlap=overlap, multi_select=multi
    )


def esa_answer(score: int, spans: list[dict] | None = None) -> dict:
    return {"spans": spans or [], "score": score, "confirmed_low_score": True}


def choice_answer(*indices: int, confidence: int = 4) -> dict:
    return {"selected": list(indices), "confidence": confidence, "comment": ""}
