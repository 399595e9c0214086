"""Fixtures of background-import tests: a media folder of the test's own and a low threshold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from difficulty.models import DifficultyDataset

# Uploads above this many bytes go to a worker in these tests (the default is 2 MB).
THRESHOLD = 2_000


@pytest.fixture(autouse=True)
def media(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture(autouse=True)
def low_threshold(settings) -> None:
    settings.IMPORT_INLINE_MAX_BYTES = THRESHOLD


def dataset_lines(n: int, bad_last: bool = False) -> list[bytes]:
    """``n`` WMT-style lines over two language pairs; the last one refused if ``bad_last``."""
    rows = []
    for i in range(n):
        lp = "en-cs" if i % 3 else "en-de"
        rows.append(
            {
                "langs": lp,
                "line_id": i,
                "doc_id": f"doc{i // 10}",
                "src": f"sentence number {i} " + "word " * (i % 7),
                "tgt": {"sysA": f"a{i}", "sysB": f"b{i}", "refA": f"r{i}"},
                "scores": {"sysA": 100 - i % 50, "sysB": 50 + i % 30, "refA": 100},
                "comet": round(0.9 - (i % 40) / 100, 3),
            }
        )
    lines = [json.dumps(row).encode() + b"\n" for row in rows]
    if bad_last:
        lines[-1] = b'{"langs": "en-cs", "src": "no scores"}\n'
    return lines


def upload(lines: list[bytes], name: str = "big.jsonl") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, b"".join(lines), content_type="application/jsonl")


def snapshot(dataset: DifficultyDataset) -> dict:
    """Everything an import wrote, without ids, names or times: equal for equal imports."""
    pairs = []
    for pair in dataset.language_pairs.order_by("code"):
        systems = list(
            pair.systems.order_by("column").values_list(
                "name", "column", "is_reference", "n_scored", "mean_score"
            )
        )
        pairs.append((pair.code, pair.n_segments, bytes(pair.scores), systems))
    segments = list(
        dataset.segments.order_by("language_pair__code", "row").values_list(
            "row", "line_number", "segment_key", "doc_id", "source", "source_key",
            "translations", "scores", "extra",
        )
    )  # fmt: skip
    fields = ("origin", "source_file_name", "reference_rule", "extra_fields", "perfect_score",
              "n_segments", "n_language_pairs", "n_systems", "description")  # fmt: skip
    return {
        "dataset": {field: getattr(dataset, field) for field in fields},
        "pairs": pairs,
        "segments": segments,
    }
