"""The field's multi-system releases imported as difficulty datasets, as they ship: each importer
on its real sample (../shared/data/ranking/) and on hostile variants built here, through the
service (the command, the page and the API call the same one; see test_release_pages.py)."""

from __future__ import annotations

import io
import math
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from difficulty import selectors
from difficulty.dataset_format import DatasetFormatError, ReferenceRule
from difficulty.models import DifficultyDataset, DifficultySegment
from difficulty.services import (
    DifficultyDatasetError,
    import_difficulty_file,
    import_difficulty_path,
)
from tests.difficulty.test_difficulty_import import line, nothing_written

pytestmark = pytest.mark.django_db

RANKING = "ranking"
SXS = "google-mqm-sxs-2023/sxs_mqm_generalMT2023_ende.3ratingsPerSegment.tsv.tar.gz"


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


def tar_gz_of(folder: Path, arcname: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(folder, arcname=arcname)
    return buffer.getvalue()


def system_scores(path: Path) -> dict[str, float]:
    pairs = (line.split("\t") for line in path.read_text(encoding="utf-8").splitlines())
    return {system: float(score) for system, score in pairs if score != "None"}


def means(dataset: DifficultyDataset) -> dict[str, float]:
    pair = dataset.language_pairs.get()
    return {s.name: s.mean_score for s in pair.systems.all()}


# --- mt-metrics-eval ---------------------------------------------------------------------------


def test_the_mtme_sample_imports_with_the_chosen_human_score(shared_data):
    folder = shared_data / RANKING / "wmt22-mtme-zhen"

    dataset = import_difficulty_path(
        folder, name="zh-en", human_score="mqm", reference_rule=ReferenceRule(names=())
    )

    pair = dataset.language_pairs.get()
    systems = {s.name: s for s in pair.systems.all()}
    assert (dataset.n_segments, pair.code, len(systems)) == (1875, "zh-en", 16)
    # MQM scores 16 of the 20 outputs; the other four are left out and said so.
    assert dataset.import_report["unscored_systems"] == {
        "zh-en": ["DLUT", "NiuTrans", "QUARTZ_TuneReranking", "chrf_bestmbr"]
    }
    assert [n for n, s in systems.items() if s.is_reference] == ["refA", "refB"]
    # Each system's mean is the release's own system-level MQM score.
    official = system_scores(folder / "human-score_sd" / "zh-en.mqm.sys.score")
    assert means(dataset) == pytest.approx(official, abs=1e-9)
    first = DifficultySegment.objects.get(language_pair=pair, row=0)
    lines = {
        name: (folder / "system-outputs" / "zh-en" / f"{name}.txt").read_text().split("\n")[0]
        for name in ("Online-B", "refB")
    }
    assert (first.domain, first.segment_key, first.translations["Online-B"]) == (
        "conversation", "1", lines["Online-B"],
    )  # fmt: skip
    assert first.reference == (folder / "references" / "zh-en.refA.txt").read_text().split("\n")[0]
    assert pair.n_judgments == 0


def test_the_mtme_sample_as_an_uploaded_archive_offers_its_human_scores(shared_data, tmp_path):
    data = tar_gz_of(shared_data / RANKING / "wmt22-mtme-zhen", "wmt22")
    upload = {"source_file_name": "wmt22.tar.gz"}

    with pytest.raises(DatasetFormatError) as refused:
        import_difficulty_file(io.BytesIO(data), name="zh-en", **upload)
    dataset = import_difficulty_file(io.BytesIO(data), name="z", human_score="wmt-z", **upload)

    assert refused.value.errors == [
        "choose the human score to import; wmt22 has mqm (zh-en), wmt (zh-en), wmt-appraise "
        "(zh-en), wmt-appraise-z (zh-en), wmt-z (zh-en)"
    ]
    assert dataset.import_report["test_set"] == "wmt22"
    assert dataset.import_report["none_cells"] == 16680 - 1875 * len(
        dataset.import_report["unscored_systems"].get("zh-en", [])
    )
    assert DifficultyDataset.objects.count() == 1


MTME = {
    "wmt23/sources/en-de.txt": "One.\nTwo.\nThree.\n",
    "wmt23/references/en-de.refA.txt": "Eins.\nZwei.\nDrei.\n",
    "wmt23/documents/en-de.docs": "news\td1\nnews\td1\nsocial\td2\n",
    "wmt23/system-outputs/en-de/sysA.txt": "Ein.\nZwo.\nDrei.\n",
    "wmt23/system-outputs/en-de/sysC.txt": "A.\nB.\nC.\n",
    "wmt23/system-outputs/en-de/refA.txt": "Eins.\nZwei.\nDrei.\n",
    "wmt23/human-scores/en-de.mqm.seg.score": (
        "sysA\t-1\nsysA\tNone\nsysA\t-5.5\n"
        "sysB\t0\nsysB\t-2\nsysB\tNone\n"
        "refA\t0\nrefA\t-0.1\nrefA\t0\n"
        "sysC\tNone\nsysC\tNone\nsysC\tNone\n"
    ),
    "wmt23/human-scores/en-de.mqm.sys.score": "sysA\t-3.25\n",
    "wmt23/metric-scores/en-de/BLEU-refA.seg.score": "sysA\t1\n",
}


def test_an_mtme_tree_keeps_none_cells_unscored_and_leaves_never_scored_systems_out(tmp_path):
    root = write_tree(tmp_path / "mt-metrics-eval-v2", MTME)

    dataset = import_difficulty_path(root, name="t", reference_rule=ReferenceRule(names=()))

    pair = dataset.language_pairs.get()
    matrix = pair.score_matrix()
    assert [s.name for s in pair.systems.all()] == ["refA", "sysA", "sysB"]
    np.testing.assert_array_equal(
        matrix, [[0.0, -1.0, 0.0], [-0.1, math.nan, -2.0], [0.0, -5.5, math.nan]]
    )
    assert dataset.import_report | {"human_scores_found": None} == {
        "release": "mt-metrics-eval", "test_set": "wmt23", "human_score": "mqm",
        "human_scores_found": None, "none_cells": 2, "blank_score_lines": 0,
        "unscored_systems": {"en-de": ["sysC"]}, "scored_without_output": {"en-de": ["sysB"]},
        "references": {"en-de": ["refA"]},
    }  # fmt: skip
    assert pair.systems.get(name="refA").is_reference
    segments = list(DifficultySegment.objects.filter(language_pair=pair).order_by("row"))
    assert [(s.doc_id, s.domain, s.translations) for s in segments][2] == (
        "d2", "social", {"refA": "Drei.", "sysA": "Drei."},
    )  # fmt: skip
    assert dataset.import_report_lines()[1:4] == [
        "2 None cells (not scored) left unscored",
        "systems with no scored segment left out: en-de: sysC",
        "scored systems without an output file kept without translations: en-de: sysB",
    ]


SCORES = "wmt23/human-scores/en-de.mqm.seg.score"
GOOD_SCORES = MTME[SCORES]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({SCORES: GOOD_SCORES + "sysA -1 extra\n"}, f"{SCORES}: line 13: 2 fields expected"),
        ({SCORES: GOOD_SCORES.replace("-5.5", "NaN")}, f"{SCORES}: line 3: score 'NaN' is not a "),
        ({SCORES: GOOD_SCORES.replace("-5.5", "1e400")}, "line 3: score 1e400 is out of range"),
        ({SCORES: GOOD_SCORES.replace("-5.5", "-5,5")}, "line 3: score '-5,5' is not a number"),
        ({SCORES: GOOD_SCORES.replace("-1\n", "-1\x00\n")}, f"{SCORES}: line 1: holds a NUL"),
        ({SCORES: GOOD_SCORES.encode().replace(b"sysB\t0", b"sys\xffB\t0")}, "line 4: is not val"),
        (
            {SCORES: GOOD_SCORES.replace("sysB\tNone\n", "")},
            f"{SCORES}: system 'sysB' has 2 score lines where sources/en-de.txt has 3",
        ),
        (
            {SCORES: GOOD_SCORES + "sysA\t0\n"},
            f"{SCORES}: line 13: system 'sysA' has more than 3 score lines",
        ),
        (
            {"wmt23/system-outputs/en-de/sysA.txt": "Ein.\nZwo.\n"},
            "system-outputs/en-de/sysA.txt: has 2 lines where sources/en-de.txt has 3",
        ),
        (
            {"wmt23/documents/en-de.docs": "news\td1\nnews d1 extra\nsocial\td2\n"},
            "wmt23/documents/en-de.docs: line 2: 2 fields expected (domain, doc), got 3",
        ),
        (
            {SCORES: "".join(f"{s}\tNone\n" for s in ("sysA",) * 3)},
            f"{SCORES}: scores no segment (every line is None)",
        ),
        (
            {"wmt22/sources/en-de.txt": "x\n", "wmt22/human-scores/en-de.mqm.seg.score": ""},
            "holds several test sets; choose one of wmt22, wmt23",
        ),
        (
            {"wmt23/human-scores/de-en.mqm.seg.score": "sysA\t1\n"},
            "wmt23/sources/de-en.txt: is missing, though human-scores/ scores de-en",
        ),
    ],
)
def test_a_hostile_mtme_tree_is_refused_naming_file_and_line(tmp_path, changes, message):
    root = write_tree(tmp_path / "release", MTME | changes)

    with pytest.raises(DatasetFormatError) as refused:
        import_difficulty_path(root, name="t")

    assert message in refused.value.errors[0]
    assert nothing_written()


def test_an_unknown_human_score_or_test_set_is_refused_with_those_on_offer(tmp_path):
    root = write_tree(tmp_path / "release", MTME)

    with pytest.raises(DatasetFormatError, match=r"wmt23 has no human score 'esa'; it has mqm \("):
        import_difficulty_path(root, name="t", human_score="esa")
    with pytest.raises(DatasetFormatError, match="no test set 'wmt24'; found wmt23"):
        import_difficulty_path(root, name="t", test_set="wmt24")
    assert nothing_written()


# --- WMT crowd DA ------------------------------------------------------------------------------


def test_the_wmt22_da_sample_keeps_the_means_and_every_judgment(shared_data):
    folder = shared_data / RANKING / "wmt22-da-lven"

    dataset = import_difficulty_path(folder, name="lv-en")

    pair = dataset.language_pairs.get()
    assert (dataset.n_segments, pair.code, pair.n_judgments) == (420, "lv-en", 4638)
    # System scores as WMT22 published them: the mean of each system's segment means.
    published = {}
    for row in (folder / "ad-sys-ranking-lv-en-z.csv").read_text().splitlines():
        _raw, z, *_rest, system = row.split()
        published[system] = float(z)
    assert {k: round(v, 3) for k, v in means(dataset).items()} == published
    assert dataset.import_report["checks"] == {"BAD_REF": 570, "REF": 574}
    assert dataset.import_report["repeats"] == 567
    judged = selectors.judgments_by_system(pair)
    with_repeats = selectors.judgments_by_system(pair, include_repeats=True)
    assert {k: v.size for k, v in judged.items()} == {
        "HuaweiTSC.0": 686, "Liv4ever.4": 831, "NiuTrans.2": 792, "TAL-SJTU.3": 845,
        "TartuNLP.1": 917,
    }  # fmt: skip
    assert sum(v.size for v in with_repeats.values()) == 4638
    assert all(v.size == 0 for v in selectors.judgments_by_system(pair, kind="raw").values())
    # Each cell's mean is the mean of its SYSTEM and REPEAT judgments (N in the release).
    segment = DifficultySegment.objects.get(language_pair=pair, segment_key="121")
    assert segment.source == "" and segment.extra["n_judgments"]["HuaweiTSC.0"] == 18


DA = {
    "ad-seg-scores-de-en.csv": (
        "SYS SID RAW.SCR Z.SCR N \nsysA 1 80 0.5 2 \nsysB 1 60 -0.5 1 \nsysA 2 70 0.1 1 \n"
    ),
    "ad-deen-good-stnd.csv": (
        "HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time\n"
        "h1\tw1\tde\ten\tad\t1\tsysA\t9\tSYSTEM\t1\t0.4\t10\n"
        "h1\tw1\tde\ten\tad\t1\tsysA\t9\tREPEAT\t1\t0.6\t10\n"
        "h1\tw1\tde\ten\tad\t1\tsysB\t9\tSYSTEM\t1\t-0.5\t10\n"
        "h1\tw2\tde\ten\tad\t1\tsysA\t9\tSYSTEM\t2\t0.1\t10\n"
        "h1\tw2\tde\ten\tad\t1\tsysB\t9\tBAD_REF\t2\t-2.0\t10\n"
    ),
}
MEANS, JUDGMENTS = "ad-seg-scores-de-en.csv", "ad-deen-good-stnd.csv"


def test_a_da_release_counts_what_it_skipped(tmp_path):
    changes = {
        MEANS: DA[MEANS] + "sysA 2 70 0.1 1\nsysC 2 NA NA 0\n",
        JUDGMENTS: DA[JUDGMENTS]
        + "h1\tw1\tde\ten\tad\t1\tsysA\t9\tSYSTEM\t1\t0.4\t10\n"
        + "h1\tw1\tde\ten\tad\t1\tsysX\t9\tSYSTEM\t1\t0.4\t10\n",
    }
    root = write_tree(tmp_path / "newstest2022-toen", DA | changes)

    dataset = import_difficulty_path(root, name="d", score_kind="raw")

    pair = dataset.language_pairs.get()
    # sysB has no mean for segment 2 and sysC none at all: NaN, not refused.
    np.testing.assert_array_equal(
        pair.score_matrix(), [[80.0, 60.0, math.nan], [70.0, math.nan, math.nan]]
    )
    assert dataset.import_report == {
        "release": "wmt-da", "score_kind": "raw", "none_cells": 1, "duplicate_rows": 2,
        "duplicate_lines": [f"{MEANS}:5", f"{JUDGMENTS}:7"], "checks": {"BAD_REF": 1},
        "repeats": 1, "judgments_without_mean": 1, "without_judgments": [], "ignored_files": [],
    }  # fmt: skip
    assert {k: v.tolist() for k, v in selectors.judgments_by_system(pair).items()} == {
        "sysA": [0.4, 0.1], "sysB": [-0.5], "sysC": [],
    }  # fmt: skip
    assert pair.judgment_annotators == ["w1", "w2"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {MEANS: DA[MEANS] + "sysA 2 71 0.1 1\n"},
            f"{MEANS}: line 5: system 'sysA', segment 2 again, with other numbers than on line 4",
        ),
        ({MEANS: DA[MEANS] + "sysA 3 70\n"}, f"{MEANS}: line 5: 5 fields expected, got 3"),
        ({MEANS: DA[MEANS] + "sysA 3 nan 0.1 1\n"}, "line 5: RAW.SCR 'nan' is not a finite"),
        ({MEANS: DA[MEANS] + "sysA 3 70 0.1 1.5\n"}, "line 5: N must be a whole number"),
        ({MEANS: "SYS SID Z.SCR N\n"}, f"{MEANS}: line 1: the header lacks column(s) RAW.SCR"),
        (
            {JUDGMENTS: DA[JUDGMENTS] + "h1\tw1\tde\ten\tad\t1\tsysA\t9\tSYSTEM\t1\t0.4\n"},
            f"{JUDGMENTS}: line 7: 12 fields expected, got 11",
        ),
        (
            {JUDGMENTS: DA[JUDGMENTS] + "h1\tw1\tcs\ten\tad\t1\tsysA\t9\tSYSTEM\t1\t0.4\t1\n"},
            f"{JUDGMENTS}: line 7: a judgment of 'cs', not of de-en",
        ),
        (
            {"ad-csen-good-stnd.csv": DA[JUDGMENTS]},
            "ad-csen-good-stnd.csv: judgments without their means file",
        ),
    ],
)
def test_a_hostile_da_release_is_refused_naming_file_and_line(tmp_path, changes, message):
    root = write_tree(tmp_path / "da", DA | changes)

    with pytest.raises(DatasetFormatError) as refused:
        import_difficulty_path(root, name="d")

    assert message in refused.value.errors[0]
    assert nothing_written()


def test_a_lone_da_means_file_needs_its_languages_and_a_judgments_file_its_means():
    means = DA[MEANS].encode()

    with pytest.raises(DifficultyDatasetError, match="names no language pair"):
        import_difficulty_file(io.BytesIO(means), name="d", source_file_name="means.csv")
    with pytest.raises(DifficultyDatasetError, match="this is a WMT DA judgments file"):
        import_difficulty_file(io.BytesIO(DA[JUDGMENTS].encode()), name="d")
    dataset = import_difficulty_file(
        io.BytesIO(means), name="d", source_file_name="means.csv", language_pair="de-en"
    )

    assert dataset.import_report["without_judgments"] == ["de-en"]
    assert dataset.language_pairs.get().n_judgments == 0


# --- Google's side-by-side MQM -----------------------------------------------------------------


def test_the_sxs_mqm_sample_averages_three_raters_and_counts_the_hotw_checks(shared_data):
    path = shared_data / RANKING / SXS

    dataset = import_difficulty_path(path, name="sxs")

    pair = dataset.language_pairs.get()
    assert (pair.code, dataset.n_segments, dataset.n_systems) == ("en-de", 104, 10)
    assert pair.n_judgments == 104 * 10 * 3
    assert dataset.import_report["checks"] == {"HOTW-test": 245}
    assert dataset.import_report["member"] == "sxs_mqm_generalMT2023_ende.3ratingsPerSegment.tsv"
    # Each cell is the mean of its three raters' scores, which are kept as raw judgments.
    raw = selectors.judgments_by_system(pair, kind="raw")
    matrix = pair.score_matrix()
    for system in pair.systems.all():
        cells = matrix[:, system.column]
        assert raw[system.name].mean() == pytest.approx(cells.mean())
    table = pair.judgment_table()
    for annotator in range(len(pair.judgment_annotators)):
        mine = table["z"][table["annotator"] == annotator]
        assert abs(mine.mean()) < 1e-9


HEADER_2023 = (
    "system\tdoc\tdocSegId\tglobalSegId\trater\tsource\ttarget\tcategory\tseverity\tmetadata\t"
    "# Documentation: https://example.org\n"
)
ROWS_2023 = [
    "sysA\td1\t1\t1\tr1\tA cat.\tEine <v>Katze</v>.\tAccuracy/Mistranslation\tMajor\t{}",
    "sysA\td1\t1\t1\tr2\tA cat.\tEine Katze.\tNo-error\tNo-error\t{}",
    "sysA\td1\t1\t1\tr2\tA cat.\tEine Katze.\tFound\tHOTW-test\t{}",
    "sysB\td1\t1\t1\tr1\tA cat.\tEine Katze .\tSource issue\tMajor\t{}",
    "sysB\td1\t1\t1\tr3\tA cat.\tEine Katze .\tMissed\tHOTW-test\t{}",
]


def test_a_2023_mqm_tsv_scores_source_issues_nothing_and_cells_rated_only_by_checks_not_at_all():
    data = (HEADER_2023 + "\n".join(ROWS_2023) + "\n").encode()

    dataset = import_difficulty_file(
        io.BytesIO(data), name="m", source_file_name="mqm_generalMT2023_ende.tsv"
    )

    pair = dataset.language_pairs.get()
    assert pair.score_matrix().tolist() == [[(80.0 + 100.0) / 2, 100.0]]
    assert dataset.import_report | {"language_pair_from_file_name": None} == {
        "language_pair_from_file_name": None, "unbalanced_mark_rows": 0,
        "unbalanced_mark_lines": [], "checks": {"HOTW-test": 2}, "check_lines": [4, 6],
    }  # fmt: skip
    assert {k: v.tolist() for k, v in selectors.judgments_by_system(pair, kind="raw").items()} == {
        "sysA": [80.0, 100.0], "sysB": [100.0],
    }  # fmt: skip


def test_an_archive_that_leaves_itself_is_refused_and_nothing_is_written(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("../ad-seg-scores-de-en.csv", DA[MEANS])

    with pytest.raises(DifficultyDatasetError) as refused:
        import_difficulty_file(
            io.BytesIO(buffer.getvalue()), name="d", source_file_name="release.zip"
        )

    assert str(refused.value) == (
        "release.zip: member '../ad-seg-scores-de-en.csv' points outside the archive (..); refused"
    )
    assert nothing_written()


@pytest.mark.parametrize("file_format", ["auto", "wmt-jsonl"])
def test_a_single_file_format_imports_from_an_archive_holding_it(file_format):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("release/README.txt", "notes")
        archive.writestr("release/esa.jsonl", line() + "\n")

    dataset = import_difficulty_file(
        io.BytesIO(buffer.getvalue()), name="j", file_format=file_format, source_file_name="r.zip"
    )

    assert (dataset.n_segments, dataset.n_systems) == (1, 2)
