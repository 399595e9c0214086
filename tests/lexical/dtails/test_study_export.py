"""Exporting a finished lexical-selection study: released shape and the extended CSV."""

from __future__ import annotations

import csv
import io
import json

import pytest

from annotation import qc
from annotation.models import Enrollment
from lexical.dtails import exports
from tests.lexical.dtails.study_helpers import finished_study

pytestmark = pytest.mark.django_db

HEADER = "concept,source language text,target language text,variations,label\n"


def test_the_annotator_who_failed_the_check_is_left_out():
    campaign = finished_study()
    verdicts = {
        e.annotator.pseudonym: qc.verdict_for(e)
        for e in Enrollment.objects.filter(campaign=campaign)
    }
    assert verdicts == {"ann-ana": "pass", "ann-bo": "pass", "ann-cy": "pass", "ann-eve": "fail"}


def test_released_csv_keeps_items_whose_majority_is_the_attested_variation():
    campaign = finished_study()
    # Item 1: dátil 2-1 (attested) → kept. Item 2: dátil/fecha/cita tie → dropped (and eve's
    # extra "fecha" vote would have decided it, had it counted). Item 3: cita 3-0 → kept, and
    # its formula-looking cells are written as they are (byte-exact released shape).
    assert exports.study_released_csv(campaign).decode() == HEADER + (
        "date,She brings me dried dates.,Me trae dátiles secos.,"
        "\"['cita', 'dátil', 'fecha']\",dátil\n"
        "date,=HYPERLINK(date),=HYPERLINK(cita),\"['cita', 'dátil', 'fecha']\",cita\n"
    )


def test_attested_wins_tie_rule_keeps_the_tied_item():
    campaign = finished_study(tie_rule="attested_wins")
    rows = exports.study_released_csv(campaign).decode().splitlines()
    assert [row.rsplit(",", 1)[1] for row in rows[1:]] == ["dátil", "fecha", "cita"]


def test_extended_csv_has_every_vote_and_guards_formulas():
    campaign = finished_study()
    rows = list(csv.DictReader(io.StringIO(exports.study_extended_csv(campaign).decode())))
    assert [r["seg_id"] for r in rows] == ["example-1", "example-2", "example-3"]
    first, tie, formula = rows
    assert json.loads(first["votes"]) == {"ann-ana": "dátil", "ann-bo": "dátil", "ann-cy": "fecha"}
    assert list(json.loads(first["votes"])) == ["ann-ana", "ann-bo", "ann-cy"]  # stable order
    assert json.loads(first["confidences"]) == {"ann-ana": 3, "ann-bo": 2, "ann-cy": 1}
    assert json.loads(first["excluded"]) == {"ann-eve": "fail"}
    assert (first["majority"], first["majority_votes"], first["tie"]) == ("dátil", "2", "False")
    assert (first["sufficient_context"], first["n_counted"]) == ("True", "3")
    assert float(first["item_agreement"]) == pytest.approx(1 / 3)
    assert (tie["majority"], tie["tie"], tie["sufficient_context"]) == ("tie", "True", "False")
    assert float(tie["item_agreement"]) == 0.0
    assert formula["source language text"] == "'=HYPERLINK(date)"
    assert formula["target language text"] == "'=HYPERLINK(cita)"
    assert formula["variations"] == "['cita', 'dátil', 'fecha']"


def test_an_unfinished_item_is_not_in_the_dataset_even_when_its_votes_agree():
    """Two of four votes, both attested: the study page counts the item as not complete, so the
    DTAiLS dataset leaves it out too (one definition: lexical.studies.selection_study.results)."""
    from annotation.services.campaigns import create_campaign
    from tests.annotation.campaign_builders import make_annotator, work
    from tests.lexical.dtails.study_helpers import CHECK, ITEMS, VOTES

    campaign = create_campaign(
        "Half done", "choice", [*ITEMS, CHECK], overlap=4, src_lang="en", tgt_lang="es",
        qc_min_checks=1, qc_min_seconds_per_item=0,
    )  # fmt: skip
    for who in ("ana", "bo"):
        votes = VOTES[who]
        work(make_annotator(who), campaign, lambda item, v=votes: {
            "selected": [item.choices.index(v[item.seg_id])], "confidence": 3,
        })  # fmt: skip
    assert exports.study_released_csv(campaign).decode() == HEADER
    rows = list(csv.DictReader(io.StringIO(exports.study_extended_csv(campaign).decode())))
    first = rows[0]
    assert (first["majority"], first["sufficient_context"]) == ("dátil", "False")
