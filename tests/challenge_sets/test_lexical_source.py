"""Items from a lexical-selection study: the sentences with sufficient context and their frozen
provenance, validated again with "majority = attested label", frozen and exported as DTAiLS
(released shape) and as the extended CSV; refusals write nothing; the pages show it."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse

from annotation.models import Campaign, Item
from challenge_sets import exports, services, sources, validation
from challenge_sets.models import AuditEntry, ChallengeItem
from challenge_sets.sources import SourceError
from challenge_sets.versions import freeze_version
from lexical.models import ConceptExample
from tests.annotation.campaign_builders import make_annotator, work
from tests.challenge_sets.conftest import make_set
from tests.lexical.studies.selection_study.helpers import make_study, make_study_selection

pytestmark = pytest.mark.django_db

FORMULA = "=HYPERLINK(khorma)"


def _attested(item: Item) -> str:
    return item.meta["attested"]


def _other(item: Item) -> str:
    return next(c for c in item.choices if c != _attested(item))


def _vote(pick):
    return lambda item: {"selected": [item.choices.index(pick(item))], "confidence": 2}


def finished_study():
    """The Farsi study: a and b pick the attested variation on "date" and another on "trip",
    c always another; "date" sentences have sufficient context (2 of 3), "trip" ones do not.
    One target sentence looks like a spreadsheet formula."""
    selection = make_study_selection()
    ConceptExample.objects.filter(src="The dried date kept for months.").update(tgt=FORMULA)
    study = make_study(selection)
    campaign = study.campaign
    Campaign.objects.filter(pk=campaign.pk).update(qc_min_seconds_per_item=0)

    def agree_but_trip(item):
        return _other(item) if item.meta["concept"] == "trip" else _attested(item)

    for name, pick in (("a", agree_but_trip), ("b", agree_but_trip), ("c", _other)):
        work(make_annotator(name), campaign, _vote(pick))
    return study


def lexical_set(name="Lexical fa"):
    return make_set(name, rows=[], protocol="choice", rule="majority_is_attested", overlap=3)


def test_the_source_takes_the_sentences_with_sufficient_context_and_their_provenance():
    study = finished_study()
    challenge_set = lexical_set()
    result = services.add_items_from_source(challenge_set, "lexical_selection", {"study": study.pk})
    assert (result.added, result.skipped) == (3, 0)
    items = list(ChallengeItem.objects.filter(challenge_set=challenge_set).order_by("source"))
    assert [i.source for i in items] == [
        "An unripe date is crunchy.", "The dried date kept for months.",
        "We ate a fresh date from the tree.",
    ]  # fmt: skip
    unripe = items[0]
    study_item = Item.objects.get(campaign=study.campaign, source=unripe.source)
    assert (unripe.origin, unripe.origin_ref) == (
        "lexical_selection", f"study:{study.pk}:item:{study_item.pk}")  # fmt: skip
    assert (unripe.src_lang, unripe.tgt_lang, unripe.translations) == ("en", "fa", {})
    assert unripe.question == study_item.question
    assert unripe.choices == ["khorma", "rotab", "kharak"] and unripe.attested == "kharak"
    p = unripe.provenance
    assert p["target_text"] == "<kharak> translation" and p["source_highlight"] == [10, 14]
    assert p["study"]["id"] == study.pk and p["study"]["tie_rule"] == "no_majority"
    assert p["study"]["confidence_labels"] == ["No idea", "Likely but uncertain", "Certain"]
    assert p["study_item"] == {"id": study_item.pk, "doc_id": study_item.doc_id,
                               "seg_id": study_item.seg_id}  # fmt: skip
    assert p["study_result"] == {
        "majority": "kharak", "majority_votes": 2, "n_counted": 3, "excluded": {},
        "votes": {"ann-a": "kharak", "ann-b": "kharak", "ann-c": "khorma"},
        "counts": {"kharak": 2, "khorma": 1}, "tie": False, "tie_broken": False,
        "agreement": pytest.approx(1 / 3),
        "confidence": {
            "by_annotator": {"ann-a": 2, "ann-b": 2, "ann-c": 2},
            "labels": {who: "Likely but uncertain" for who in ("ann-a", "ann-b", "ann-c")},
            "mean": 2.0, "scale": ["No idea", "Likely but uncertain", "Certain"],
        },
    }  # fmt: skip
    concept = p["concept"]
    assert (concept["lemma"], concept["pos"], concept["origin"]) == ("date", "NOUN", "mined")
    assert [(v["label"], v["count"]) for v in concept["variations"]] == [
        ("khorma", 60), ("rotab", 30), ("kharak", 10)]  # fmt: skip
    example = ConceptExample.objects.get(src=unripe.source)
    assert p["example"] == {"id": example.pk, "variation_id": example.variation_id,
                            "sentence_pair": None, "corpus_line": None,
                            "src_span": [10, 14], "tgt_span": None}  # fmt: skip
    # The form's choice names the study; adding it again adds nothing.
    assert (str(study.pk), f"#{study.pk} Study of Farsi study (en→fa)") in sources.get(
        "lexical_selection").choices("study")  # fmt: skip
    again = services.add_items_from_source(challenge_set, "lexical_selection", {"study": study.pk})
    assert (again.added, again.skipped) == (0, 3)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"study": 999999}, "no lexical-selection study #999999"),
        ({"study": "x"}, "study must be a whole number"),
        ({}, "study must be a whole number"),
    ],
)
def test_unknown_studies_are_refused_and_nothing_is_written(params, message):
    challenge_set = lexical_set()
    before = AuditEntry.objects.count()
    with pytest.raises(SourceError) as error:
        services.add_items_from_source(challenge_set, "lexical_selection", params)
    assert error.value.errors == [message]
    assert not ChallengeItem.objects.exists() and AuditEntry.objects.count() == before


def test_a_study_without_a_decided_item_is_refused():
    study = make_study()
    with pytest.raises(SourceError, match="has no item with sufficient context yet"):
        services.add_items_from_source(lexical_set(), "lexical_selection", {"study": study.pk})
    assert not ChallengeItem.objects.exists()


def _validate(challenge_set, picks, django_capture_on_commit_callbacks):
    """The set's own validators pick ``picks[name](item)`` on its choice campaign."""
    validation.send_for_validation(challenge_set)
    campaign = challenge_set.campaign
    with django_capture_on_commit_callbacks(execute=True):
        for name, pick in picks.items():
            work(make_annotator(name), campaign, _vote(pick))
    return campaign


def test_majority_is_attested_proposes_then_a_frozen_version_exports_dtails(
    curator, django_capture_on_commit_callbacks
):
    study = finished_study()
    challenge_set = lexical_set()
    services.add_items_from_source(challenge_set, "lexical_selection", {"study": study.pk})
    by_source = {i.source: i for i in ChallengeItem.objects.filter(challenge_set=challenge_set)}
    attested = {source: item.attested for source, item in by_source.items()}

    def truth(item):
        return attested[item.source]

    def wrong(item):
        return next(c for c in item.choices if c != truth(item))

    def unripe(answer: str, otherwise):  # the unripe date gets three different answers: a tie
        return lambda item: answer if item.source.startswith("An unripe") else otherwise(item)

    picks = {"v1": truth, "v2": unripe("khorma", truth), "v3": unripe("rotab", wrong)}
    campaign = _validate(challenge_set, picks, django_capture_on_commit_callbacks)
    # The validators see the study's question, the variations and the word to translate.
    sent = Item.objects.get(campaign=campaign, source="We ate a fresh date from the tree.")
    assert sent.choices == ["khorma", "rotab", "kharak"] and sent.meta["source_highlight"] == [
        15, 19]  # fmt: skip
    proposals = {
        i.source: (i.validation, i.human["majority"], i.proposal, i.proposal_reason)
        for i in ChallengeItem.objects.filter(challenge_set=challenge_set)
    }
    assert proposals == {
        "We ate a fresh date from the tree.":
            ("validated", "rotab", "accept", "majority = attested (rotab)"),
        "The dried date kept for months.":
            ("validated", "khorma", "accept", "majority = attested (khorma)"),
        "An unripe date is crunchy.": ("validated", "tie", "review", "no majority"),
    }  # fmt: skip
    # A validator majority against the attested label proposes a rejection.
    services.add_items_from_source(
        other := lexical_set("Lexical fa, against"), "lexical_selection", {"study": study.pk}
    )
    _validate(other, {"w1": wrong, "w2": wrong, "w3": truth}, django_capture_on_commit_callbacks)
    against = ChallengeItem.objects.get(challenge_set=other, source__startswith="We ate")
    assert (against.proposal, against.proposal_reason) == (
        "reject", "majority 'khorma' ≠ attested 'rotab'")  # fmt: skip

    accepted = [by_source["We ate a fresh date from the tree."].pk,
                by_source["The dried date kept for months."].pk]  # fmt: skip
    services.decide_items(challenge_set, accepted, "accepted", user=curator)
    version = freeze_version(challenge_set, user=curator)
    assert set(exports.formats_for(version)) >= {"dtails", "dtails-extended", "annotations"}
    released = b"".join(exports.stream(version, "dtails")).decode()
    assert released == (
        "concept,source language text,target language text,variations,label\n"
        "date,We ate a fresh date from the tree.,<rotab> translation,"
        "\"['khorma', 'rotab', 'kharak']\",rotab\n"
        f"date,The dried date kept for months.,{FORMULA},\"['khorma', 'rotab', 'kharak']\","
        "khorma\n"
    )  # the released shape is byte-compatible: formulas are written as they are
    extended = b"".join(exports.stream(version, "dtails-extended")).decode()
    rows = list(csv.DictReader(io.StringIO(extended)))
    assert list(rows[0])[:9] == ["item_id", "doc_id", "seg_id", "concept", "pos",
                                 "source language text", "target language text", "variations",
                                 "attested"]  # fmt: skip
    fresh, dried = rows
    assert fresh["item_id"] == f"item-{accepted[0]}" and fresh["attested"] == "rotab"
    assert json.loads(fresh["votes"]) == {"ann-a": "rotab", "ann-b": "rotab", "ann-c": "khorma"}
    assert json.loads(fresh["confidences"]) == {"ann-a": 2, "ann-b": 2, "ann-c": 2}
    assert (fresh["majority"], fresh["majority_votes"], fresh["sufficient_context"]) == (
        "rotab", "2", "True")  # fmt: skip
    assert (fresh["decision"], fresh["validation_majority"], fresh["validation_judgments"]) == (
        "accepted", "rotab", "3")  # fmt: skip
    assert fresh["study"] == "Study of Farsi study" and fresh["study_confidence_mean"] == "2.0"
    assert dried["target language text"] == "'" + FORMULA  # guarded in the extended CSV
    assert exports.filename(version, "dtails") == f"{challenge_set.slug}-v1-dtails.csv"
    assert exports.content_type(version, "dtails") == "text/csv; charset=utf-8"


def test_dtails_is_refused_for_a_version_of_other_items(curator):
    challenge_set = make_set()
    ChallengeItem.objects.filter(challenge_set=challenge_set).update(
        status="accepted", validation="validated"
    )
    version = freeze_version(challenge_set, user=curator)
    assert not {"dtails", "dtails-extended"} & set(exports.formats_for(version))
    with pytest.raises(exports.ExportError, match="DTAiLS holds lexical-selection items only"):
        exports.stream(version, "dtails")


def test_the_pages_add_a_study_show_its_provenance_and_offer_the_dtails_downloads(
    curator_client, curator
):
    study = finished_study()
    challenge_set = lexical_set()
    url = reverse("challenge_sets:add_from_source", args=[challenge_set.pk, "lexical_selection"])
    form = curator_client.get(reverse("challenge_sets:set_detail", args=[challenge_set.pk]))
    assert "Lexical-selection study (sufficient context)" in form.content.decode()
    response = curator_client.post(url, {"lexical_selection-study": str(study.pk)})
    assert response.status_code == 302
    item = ChallengeItem.objects.get(challenge_set=challenge_set, source__startswith="We ate")
    page = curator_client.get(
        reverse("challenge_sets:item_detail", args=[challenge_set.pk, item.pk])
    ).content.decode()
    assert "Lexical-selection study (frozen)" in page
    assert "We ate a fresh <mark>date</mark> from the tree." in page
    assert "<code>ann-a</code> rotab" in page and "mean 2.00 on 1–3" in page
    assert reverse("lexical:concept_detail", args=[item.provenance["concept"]["id"]]) in page
    ChallengeItem.objects.filter(pk=item.pk).update(status="accepted", validation="validated")
    freeze_version(challenge_set, user=curator)
    detail = curator_client.get(reverse("challenge_sets:set_detail", args=[challenge_set.pk]))
    download = reverse("challenge_sets:download", args=[challenge_set.pk, 1, "dtails"])
    assert download in detail.content.decode()
    body = b"".join(curator_client.get(download).streaming_content).decode()
    assert body.splitlines()[1].startswith("date,We ate a fresh date from the tree.,")
