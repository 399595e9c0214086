"""Importing DTAiLS files (all or nothing) and exporting selections back to the released shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from lexical.dtails import exports, services
from lexical.dtails.format import write_csv
from lexical.dtails.services import ImportRefused
from lexical.evaluation.config import validate_evaluation
from lexical.models import Concept, ConceptExample, ExampleSelection, SelectedExample, Variation

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).resolve().parents[3] / "lexical" / "dtails" / "examples"
CSV = (EXAMPLES / "expert_dataset.csv").read_bytes()
WORDS = (EXAMPLES / "gl.words").read_bytes()
HEADER = b"concept,source language text,target language text,variations,label\n"


def refused(*args, **kwargs) -> dict[str, list[str]]:
    with pytest.raises(ImportRefused) as caught:
        services.import_dtails(*args, **kwargs)
    return caught.value.errors


def nothing_written() -> bool:
    return not any(
        model.objects.exists()
        for model in (Concept, Variation, ConceptExample, ExampleSelection, SelectedExample)
    )


def test_import_creates_concepts_examples_and_a_selection_in_file_order():
    selection = services.import_dtails("gl expert", "en", "gl", CSV, WORDS, filename="x.csv")
    assert (selection.src_lang, selection.tgt_lang, selection.params["rows"]) == ("en", "gl", 8)
    concepts = {c.lemma: c for c in Concept.objects.all()}
    assert set(concepts) == {"my", "way", "good"}
    my = concepts["my"]
    assert (my.origin, my.mining_job, my.pos, my.total_count) == ("imported", None, "PRON", 3)
    labels = {v.label: v for v in my.variations.all()}
    assert labels["meu/meus"].lemma == "meu" and labels["meu/meus"].surface_forms == ["meu", "meus"]
    assert (labels["meu/meus"].count, labels["miña/miñas"].count) == (2, 1)
    # The words file adds a variation no row lists; its POS tags reach the concepts.
    good = {v.label for v in concepts["good"].variations.all()}
    assert good == {"bo/boa/boas/bos", "mellor/mellores", "óptimo"}
    picked = [s.example for s in selection.selected.order_by("position")]
    assert [e.variation.label for e in picked][:3] == ["meu/meus", "meu/meus", "miña/miñas"]
    first = picked[0]
    assert first.src[first.src_start : first.src_end] == "my"
    assert first.tgt[first.tgt_start : first.tgt_end] == "meu"
    best = picked[7]  # "good" is not in "do your best": no source span
    assert (best.src_start, best.src_end) == (None, None)
    assert best.tgt[best.tgt_start : best.tgt_end] == "mellor"
    assert set(selection.concepts.all()) == set(concepts.values())


def test_import_then_export_gives_back_the_same_bytes():
    selection = services.import_dtails("round trip", "en", "gl", CSV, WORDS)
    assert exports.selection_csv(selection) == CSV
    without_words = services.import_dtails("no words", "en", "gl", CSV)
    assert exports.selection_csv(without_words) == CSV


def test_a_repeated_row_is_imported_once_or_kept_as_asked():
    repeated = CSV + CSV.splitlines(keepends=True)[-1]
    selection = services.import_dtails("once", "en", "gl", repeated)
    assert selection.selected.count() == 8
    assert (selection.params["rows"], selection.params["repeated_rows"]) == (8, 1)
    assert selection.params["repeated_lines"] == [10]
    assert exports.selection_csv(selection) == CSV
    kept = services.import_dtails("kept", "en", "gl", repeated, keep_duplicates=True)
    assert kept.selected.count() == 9
    assert (kept.params["rows"], kept.params["repeated_rows"]) == (9, 1)
    assert exports.selection_csv(kept) == repeated


def test_imported_selection_can_be_evaluated():
    selection = services.import_dtails("eval me", "en", "gl", CSV, WORDS)
    fields, errors = validate_evaluation(
        {"selection": selection.pk, "entries": ["frequency"], "runs": 1}
    )
    assert "selection" not in errors
    assert len(fields["snapshot"]["examples"]) == 8


def test_an_error_on_line_57_writes_nothing():
    good = b"w,the w here,una x,\"['x', 'y']\",x\n"
    rows = [good.replace(b"here", b"here %d" % n) for n in range(60)]
    rows[55] = b"w,the w,una x,\"['x', 'y']\",z\n"  # record 56 sits on line 57
    errors = refused("big", "en", "es", HEADER + b"".join(rows))
    assert errors == {"csv_file": ["line 57: label 'z' is not one of the variations ['x', 'y']"]}
    assert nothing_written()


def test_a_failure_while_writing_rolls_everything_back(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(SelectedExample.objects, "bulk_create", boom)
    with pytest.raises(RuntimeError):
        services.import_dtails("broken", "en", "gl", CSV, WORDS)
    assert nothing_written()


def test_reimporting_into_an_existing_name_is_refused():
    services.import_dtails("gl expert", "en", "gl", CSV)
    before = ConceptExample.objects.count()
    errors = refused("gl expert", "en", "gl", CSV)
    assert "already exists" in errors["name"][0]
    assert ConceptExample.objects.count() == before


def test_inconsistent_rows_and_words_are_refused_with_lines():
    data = HEADER + (
        b"a,a b,x,\"['x', 'y']\",x\na,a c,y,\"['y', 'x']\",y\nb,b c,y,\"['y', 'yy']\",y\n"
    )
    errors = refused("bad", "en", "es", data, b"b,NOUN,y;z\n")
    assert errors == {
        "csv_file": [
            "line 3: variations ['y', 'x'] differ from ['x', 'y'] of 'a' on line 2",
            "line 4: the words file lists 'b' (line 1) without variation(s) 'yy'",
        ]
    }
    assert nothing_written()


def test_bad_languages_and_words_file_errors_name_the_field():
    assert set(refused("x", "english!", "", CSV)) == {"src_lang", "tgt_lang"}
    errors = refused("x", "en", "gl", CSV, b"my,PRON\n")
    assert errors == {"words_file": ["line 1: expected concept,POS,var1;var2;... (two commas)"]}
    assert "byte 0xff" in refused("x", "en", "gl", b"\xff")["csv_file"][0]
    assert nothing_written()


def test_selection_export_of_mined_data_uses_attested_variations():
    concept = Concept.objects.create(src_lang="en", tgt_lang="es", lemma="trip", pos="NOUN")
    viaje = Variation.objects.create(
        concept=concept, lemma="viaje", surface_forms=["viaje", "viajes"], count=5
    )
    Variation.objects.create(concept=concept, lemma="gira", surface_forms=["gira"], count=3)
    dropped = Variation.objects.create(concept=concept, lemma="x", dropped=True, count=1)
    selection = ExampleSelection.objects.create(name="mined", src_lang="en", tgt_lang="es", seed=1)
    for position, (variation, text) in enumerate([(viaje, "A trip."), (dropped, "Trip x.")]):
        example = ConceptExample.objects.create(
            concept=concept, variation=variation, src=text, tgt="Un viaje."
        )
        SelectedExample.objects.create(selection=selection, example=example, position=position)
    export = exports.selection_rows(selection)
    assert export.skipped == 1
    assert (
        write_csv(export.rows)
        == HEADER + b"trip,A trip.,Un viaje.,\"['viaje/viajes', 'gira']\",viaje/viajes\n"
    )
