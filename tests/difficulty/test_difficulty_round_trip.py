"""Difficulty datasets export in the JSONL they import, and campaign exports import as datasets.

* the real WMT24 file → dataset → download: the same JSON objects, line by line;
* any dataset → download → import: the same dataset (segments, systems, score matrix);
* an ESA campaign's per-annotation JSONL (the WMT ESA release's rows) → dataset: each system's
  score is the mean of its annotators' scores, with ``annotations`` as in the WMT24 file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import exports
from annotation.services.campaigns import create_campaign
from difficulty import selectors, services
from difficulty.dataset_format import DatasetFormatError
from difficulty.models import DifficultyDataset
from tests.annotation.campaign_builders import esa_answer, make_annotator, work

pytestmark = pytest.mark.django_db

GOLDEN = Path(__file__).resolve().parent.parent / "annotation" / "golden"
WMT_FILE = "wmt24_esa_en-cs.jsonl"


def download(dataset: DifficultyDataset) -> str:
    return "".join(selectors.dataset_jsonl(dataset))


SEGMENT_FIELDS = (
    "row", "segment_key", "doc_id", "domain", "source", "source_key", "reference",
    "translations", "scores", "extra",
)  # fmt: skip


def snapshot(dataset: DifficultyDataset) -> dict:
    """Everything an import writes, without ids and times."""
    pairs = {}
    for lp in dataset.language_pairs.order_by("code"):
        pairs[lp.code] = {
            "langs": (lp.src_lang, lp.tgt_lang, lp.n_segments),
            "systems": list(
                lp.systems.order_by("column").values_list(
                    "name", "column", "is_reference", "n_scored", "mean_score"
                )
            ),
            "segments": list(lp.segments.order_by("row").values(*SEGMENT_FIELDS)),
            "matrix": lp.score_matrix().tolist(),
        }
    counts = (dataset.n_segments, dataset.n_language_pairs, dataset.n_systems)
    return {"pairs": pairs, "counts": counts, "extra_fields": dataset.extra_fields}


def same_matrices(a: dict, b: dict) -> bool:
    return all(
        np.array_equal(np.array(a["pairs"][code]["matrix"]), np.array(b["pairs"][code]["matrix"]),
                       equal_nan=True)
        for code in a["pairs"]
    )  # fmt: skip


def without_matrices(snap: dict) -> dict:
    return {**snap, "pairs": {k: {**v, "matrix": None} for k, v in snap["pairs"].items()}}


def assert_same_dataset(a: DifficultyDataset, b: DifficultyDataset) -> None:
    first, second = snapshot(a), snapshot(b)
    assert without_matrices(first) == without_matrices(second)
    assert same_matrices(first, second)


def test_the_wmt24_file_downloads_as_it_was_imported(shared_data):
    text = (shared_data / WMT_FILE).read_text(encoding="utf-8")
    dataset = services.import_difficulty_dataset(text.splitlines(), name="wmt24")
    exported = download(dataset)
    assert [json.loads(line) for line in exported.splitlines()] == [
        json.loads(line) for line in text.splitlines()
    ]
    copy = services.import_difficulty_dataset(exported.splitlines(), name="wmt24 again")
    assert_same_dataset(copy, dataset)


MIXED = [
    # Two language pairs, a null score, a textual line_id, an extra field, no domain or ref.
    {"langs": "en-de", "line_id": "talk.1-3", "doc_id": "talk.1", "src": "Hi.",
     "scores": {"sysA": 80.5, "sysB": None}, "tgt": {"sysA": "Hallo.", "sysB": "Hi."},
     "mqm_penalty": {"sysA": 4.875}},
    {"langs": "en-cs", "line_id": 7, "domain": "news", "src": "Bye.", "ref": "Ahoj.",
     "scores": {"refA": 100, "sysA": 55}},
]  # fmt: skip


def test_any_dataset_imports_back_from_its_download():
    lines = [json.dumps(row, ensure_ascii=False) for row in MIXED]
    dataset = services.import_difficulty_dataset(lines, name="mixed")
    exported = download(dataset)
    golden = GOLDEN / "difficulty_dataset.jsonl"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_text(exported, encoding="utf-8", newline="")
    assert exported == golden.read_text(encoding="utf-8")
    copy = services.import_difficulty_dataset(exported.splitlines(), name="mixed again")
    assert_same_dataset(copy, dataset)


def test_download_page_and_api(admin_client, admin_user):
    dataset = services.import_difficulty_dataset(
        [json.dumps(row) for row in MIXED], name="Mixed set"
    )
    response = admin_client.get(reverse("difficulty:dataset_download", args=[dataset.pk]))
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="mixed-set.jsonl"'
    assert b"".join(response.streaming_content).decode() == download(dataset)
    detail = admin_client.get(reverse("difficulty:dataset_detail", args=[dataset.pk]))
    assert reverse("difficulty:dataset_download", args=[dataset.pk]) in detail.content.decode()
    api = APIClient()
    api.force_authenticate(admin_user)
    response = api.get(f"/api/difficulty-datasets/{dataset.pk}/export/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/jsonl")
    assert b"".join(response.streaming_content).decode() == download(dataset)
    assert api.get("/api/difficulty-datasets/999/export/").status_code == 404


def test_download_is_for_staff_only(client, annotator_user):
    dataset = services.import_difficulty_dataset([json.dumps(MIXED[1])], name="private")
    client.force_login(annotator_user)
    url = reverse("difficulty:dataset_download", args=[dataset.pk])
    assert client.get(url).status_code == 302  # to the admin login
    api = APIClient()
    api.force_authenticate(annotator_user)
    assert api.get(f"/api/difficulty-datasets/{dataset.pk}/export/").status_code == 403


# --- WMT ESA per-annotation rows ---------------------------------------------------------------


def esa_wmt_campaign():
    items = [
        {"doc_id": "news-1", "seg_id": "1", "source": "The cat sat.", "target": "Kočka seděla.",
         "system": "sysA", "meta": {"line_id": 1, "domain": "news"}},
        {"doc_id": "news-1", "seg_id": "1", "source": "The cat sat.", "target": "Kočka sedí.",
         "system": "sysB", "meta": {"line_id": 1, "domain": "news"}},
        {"doc_id": "news-1", "seg_id": "2", "source": "It rained.", "target": "Pršelo.",
         "system": "sysA", "meta": {"line_id": 2, "domain": "news"}},
    ]  # fmt: skip
    return create_campaign("WMT-like ESA", "esa", items, src_lang="en", tgt_lang="cs", overlap=2)


SCORES = {"alice": [90, 40, 70], "bob": [80, 60, 71]}  # per item, in order


def test_esa_annotation_rows_import_as_a_dataset():
    campaign = esa_wmt_campaign()
    for name, scores in SCORES.items():
        queue = iter(scores)
        work(make_annotator(name), campaign, lambda item, q=queue: esa_answer(next(q)))
    rows = "".join(exports.stream_export(campaign, "jsonl"))
    dataset = services.import_difficulty_dataset(rows.splitlines(), name="from rows")
    objects = [json.loads(line) for line in download(dataset).splitlines()]
    assert [(o["line_id"], o["domain"], o["doc_id"], o["src"]) for o in objects] == [
        (1, "news", "news-1", "The cat sat."),
        (2, "news", "news-1", "It rained."),
    ]
    assert objects[0]["scores"] == {"sysA": 85.0, "sysB": 50.0}
    assert objects[0]["annotations"] == {
        "sysA": [["ann-alice", 90.0], ["ann-bob", 80.0]],
        "sysB": [["ann-alice", 40.0], ["ann-bob", 60.0]],
    }
    assert objects[0]["n_annotations"] == {"sysA": 2, "sysB": 2}
    assert objects[0]["tgt"] == {"sysA": "Kočka seděla.", "sysB": "Kočka sedí."}
    assert objects[1]["scores"] == {"sysA": 70.5}
    # The campaign's own route to a dataset gives the same scores.
    built = services.build_difficulty_dataset_from_campaign(campaign, name="built")
    built_scores = [s.scores for s in built.segments.order_by("row")]
    assert built_scores == [o["scores"] for o in objects]


def test_bad_annotation_rows_are_refused_by_line():
    good = {"langs": "en-cs", "line_id": 1, "system": "sysA", "annotator": "a1",
            "src": "Hi.", "tgt": "Ahoj.", "esa_score": 80}  # fmt: skip
    lines = [
        json.dumps(good),
        json.dumps({**good, "annotator": "a2", "src": "Hello."}),
        json.dumps({**good, "annotator": "a3", "esa_score": "high"}),
        json.dumps({**good, "annotator": ""}),
    ]
    with pytest.raises(DatasetFormatError) as caught:
        services.import_difficulty_dataset(lines, name="bad rows")
    assert caught.value.errors == [
        "line 2: src differs from the segment's first row",
        "line 3: esa_score must be a number or null, got 'high'",
        "line 4: annotator must be a non-empty string",
    ]
    assert not DifficultyDataset.objects.exists()


def test_non_scorable_rows_leave_the_score_out():
    row = {"langs": "en-cs", "line_id": 1, "system": "sysA", "src": "Hi.", "tgt": "Ahoj."}
    lines = [
        json.dumps({**row, "annotator": "a1", "esa_score": None}),
        json.dumps({**row, "annotator": "a2", "esa_score": 60}),
        json.dumps({**row, "system": "sysB", "annotator": "a1", "esa_score": 90}),
    ]
    dataset = services.import_difficulty_dataset(lines, name="flags")
    (segment,) = dataset.segments.all()
    assert segment.scores == {"sysA": 60.0, "sysB": 90.0}
    assert segment.extra["annotations"]["sysA"] == [["a2", 60.0]]
