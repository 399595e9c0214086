"""Importing WMT-style difficulty datasets: the real WMT24 file, and bad input changing nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from difficulty.models import (
    DifficultyDataset,
    DifficultyLanguagePair,
    DifficultySegment,
    DifficultySystem,
)

pytestmark = pytest.mark.django_db

WMT_FILE = "wmt24_esa_en-cs.jsonl"


def line(**overrides) -> str:
    row = {
        "langs": "en-cs",
        "line_id": 1,
        "doc_id": "d1",
        "domain": "news",
        "src": "Hello there.",
        "tgt": {"sysA": "Ahoj.", "refA": "Dobrý den."},
        "scores": {"sysA": 90.0, "refA": 100.0},
    }
    row.update(overrides)
    return json.dumps(row)


def write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def nothing_written() -> bool:
    return not (
        DifficultyDataset.objects.exists()
        or DifficultyLanguagePair.objects.exists()
        or DifficultySystem.objects.exists()
        or DifficultySegment.objects.exists()
    )


def test_import_the_wmt24_file(shared_data, capsys):
    path = shared_data / WMT_FILE
    rows = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]

    call_command("import_difficulty_dataset", str(path), "--name", "wmt24")

    assert "297 segments, 1 language pair(s), 16 systems" in capsys.readouterr().out
    dataset = DifficultyDataset.objects.get(name="wmt24")
    assert (dataset.n_segments, dataset.n_language_pairs, dataset.n_systems) == (297, 1, 16)
    assert dataset.source_file_name == WMT_FILE
    assert dataset.extra_fields == ["annotations", "n_annotations"]
    pair = dataset.language_pairs.get()
    assert (pair.code, pair.src_lang, pair.tgt_lang, pair.n_segments) == ("en-cs", "en", "cs", 297)
    systems = list(pair.systems.order_by("column"))
    assert [s.name for s in systems] == sorted(rows[0]["scores"])
    assert [s.name for s in systems if s.is_reference] == ["refA"]
    # The compact matrix holds exactly the file's scores, row = line, column = system.
    matrix = pair.score_matrix()
    expected = np.array([[row["scores"][s.name] for s in systems] for row in rows])
    assert matrix.shape == (297, 16)
    assert np.array_equal(matrix, expected)
    first = DifficultySegment.objects.get(language_pair=pair, row=0)
    assert first.source == rows[0]["src"]
    assert first.line_number == 1
    assert first.segment_key == "1"
    assert first.reference == rows[0]["ref"]
    assert first.translations == rows[0]["tgt"]
    assert first.extra["annotations"] == rows[0]["annotations"]
    assert DifficultySystem.objects.get(language_pair=pair, name="GPT-4").mean_score == (
        pytest.approx(np.mean([row["scores"]["GPT-4"] for row in rows]))
    )


def test_reference_rule_is_configurable(tmp_path):
    path = write(
        tmp_path,
        [line(scores={"sysA": 90, "refA": 100, "Human-B": 95, "reformer": 70, "expert": 99})],
    )

    call_command(
        "import_difficulty_dataset",
        str(path),
        "--name",
        "custom",
        "--reference-systems",
        "expert",
        "--reference-prefixes",
        "human",
    )

    references = DifficultySystem.objects.filter(is_reference=True).values_list("name", flat=True)
    assert sorted(references) == ["Human-B", "expert"]


def test_default_rule_marks_ref_and_human_prefixes(tmp_path):
    path = write(tmp_path, [line(scores={"sysA": 90, "refB": 100, "HUMAN-1": 95, "refine": 70})])

    call_command("import_difficulty_dataset", str(path), "--name", "defaults")

    references = DifficultySystem.objects.filter(is_reference=True).values_list("name", flat=True)
    assert sorted(references) == ["HUMAN-1", "refB", "refine"]


def test_several_language_pairs_and_missing_scores(tmp_path):
    path = write(
        tmp_path,
        [
            line(line_id=1, scores={"a": 10, "b": None}),
            line(line_id=1, langs="en-de", scores={"a": 50, "c": 60}),
            line(line_id=2, src="Bye.", scores={"a": 30, "b": 40}),
        ],
    )

    call_command("import_difficulty_dataset", str(path), "--name", "multi")

    cs = DifficultyLanguagePair.objects.get(code="en-cs")
    de = DifficultyLanguagePair.objects.get(code="en-de")
    assert cs.n_segments == 2 and de.n_segments == 1
    assert np.array_equal(cs.score_matrix(), np.array([[10, np.nan], [30, 40]]), equal_nan=True)
    assert DifficultyDataset.objects.get().n_systems == 3
    # The same source in two pairs has one source key (what oracle-src groups by).
    keys = DifficultySegment.objects.filter(source="Hello there.").values_list("source_key")
    assert len(set(keys)) == 1


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "line 2: not valid JSON"),
        (line(langs="english"), "line 2: langs must look like 'en-cs'"),
        (line(src=""), "line 2: src must be a non-empty string"),
        (line(scores={"a": "ninety"}), "line 2: score of 'a' must be a number or null"),
        (line(scores={}), "line 2: scores must be a non-empty object"),
        (line(scores={"a": None}), "line 2: scores has no number"),
        (line(tgt=["x"]), "line 2: tgt must be an object"),
        (json.dumps({"langs": "en-cs", "src": "x"}), "line 2: missing field 'scores'"),
        (line(line_id=1), "line 2: line_id '1' of en-cs already on line 1"),
        ("[1, 2]", "line 2: each line must be a JSON object"),
        (line(scores={"a": float("nan")}), "line 2: not valid JSON (NaN at $.scores.a is not"),
        (line(comet=float("nan")), "line 2: not valid JSON (NaN at $.comet is not"),
        (line(annotations=[{"score": float("-inf")}]), "-Infinity at $.annotations[0].score"),
    ],
)
def test_a_bad_line_writes_nothing(tmp_path, bad, message):
    path = write(tmp_path, [line(line_id=1), bad, line(line_id=3)])

    with pytest.raises(CommandError) as error:
        call_command("import_difficulty_dataset", str(path), "--name", "bad")

    assert message in str(error.value)
    assert "nothing was written" in str(error.value)
    assert nothing_written()


def test_every_bad_line_is_listed(tmp_path):
    path = write(tmp_path, [line(line_id=1), "oops", line(line_id=3), line(line_id=4, src=5)])

    with pytest.raises(CommandError) as error:
        call_command("import_difficulty_dataset", str(path), "--name", "bad")

    assert "line 2: not valid JSON" in str(error.value)
    assert "line 4: src must be a non-empty string" in str(error.value)
    assert nothing_written()


def test_invalid_utf8_is_reported(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(line().encode() + b"\n" + '{"src": "café"}'.encode("latin-1") + b"\n")

    with pytest.raises(CommandError, match="line 2: not valid UTF-8"):
        call_command("import_difficulty_dataset", str(path), "--name", "bad")
    assert nothing_written()


def test_an_empty_file_is_refused(tmp_path):
    path = write(tmp_path, ["", "  "])

    with pytest.raises(CommandError, match="the file has no segments"):
        call_command("import_difficulty_dataset", str(path), "--name", "empty")
    assert nothing_written()


def test_a_taken_name_is_refused_and_the_first_dataset_is_untouched(tmp_path):
    path = write(tmp_path, [line()])
    call_command("import_difficulty_dataset", str(path), "--name", "once")

    with pytest.raises(CommandError, match="exists already"):
        call_command("import_difficulty_dataset", str(path), "--name", "once")

    assert DifficultyDataset.objects.count() == 1
    assert DifficultySegment.objects.count() == 1
