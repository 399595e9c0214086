"""Builders for ranking tests: small difficulty datasets and frozen versions made in place."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from challenge_sets.models import FrozenVersion
from difficulty import services as difficulty_services
from difficulty.models import DifficultyDataset
from tests.challenge_sets.conftest import make_set

# Three tiers far apart (10 points, noise sd 3): every cross-tier pair is significant, no pair
# inside a tier is, whatever the test.
TIERS = {"alpha": 80.0, "beta": 79.5, "gamma": 60.0, "delta": 59.5, "eps": 40.0, "zeta": 39.5}


def tiered_scores(n_segments: int = 60, seed: int = 3) -> dict[str, list[float]]:
    rng = np.random.default_rng(seed)
    base = rng.normal(0, 8, n_segments)  # segment difficulty, shared by every system
    return {
        system: [round(float(v), 3) for v in mean + base + rng.normal(0, 3, n_segments)]
        for system, mean in TIERS.items()
    }


def dataset_rows(
    scores: Mapping[str, Sequence[float | None]], lp: str = "en-de", **extra_fields: Any
) -> list[dict[str, Any]]:
    n = len(next(iter(scores.values())))
    rows = []
    for i in range(n):
        row: dict[str, Any] = {
            "langs": lp,
            "line_id": i,
            "src": f"source sentence {i}",
            "tgt": {system: f"translation {i} by {system}" for system in scores},
            "scores": {system: values[i] for system, values in scores.items()},
        }
        for field, per_row in extra_fields.items():
            row[field] = per_row[i]
        rows.append(row)
    return rows


def make_dataset(name: str, rows: list[dict[str, Any]], **options: Any) -> DifficultyDataset:
    lines = [json.dumps(row, ensure_ascii=False).encode() for row in rows]
    return difficulty_services.import_difficulty_dataset(lines, name=name, **options)


def tiered_dataset(name: str = "tiers", **options: Any) -> DifficultyDataset:
    return make_dataset(name, dataset_rows(tiered_scores()), **options)


def make_version(items: list[dict[str, Any]], name: str = "Hard set") -> FrozenVersion:
    """A frozen version whose items are ``items`` (the fields ``challenge_sets.versions``
    writes that rankings read: id, languages, source, translations, human scores)."""
    challenge_set = make_set(name, rows=[])
    lines = "".join(json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n" for item in items)
    return FrozenVersion.objects.create(
        challenge_set=challenge_set, number=1, items_jsonl=lines,
        manifest=json.dumps({"counts": {"by_origin": {"jsonl": len(items)}}}) + "\n",
        checksum="0" * 64, n_items=len(items),
    )  # fmt: skip


def version_items(scores: Mapping[str, Sequence[float | None]], lp: str = "en-cs") -> list[dict]:
    src, tgt = lp.split("-")
    n = len(next(iter(scores.values())))
    return [
        {
            "id": f"item-{i + 1}",
            "src_lang": src,
            "tgt_lang": tgt,
            "source": f"hard sentence {i}",
            "translations": {system: f"output {i} of {system}" for system in scores},
            "human": {"scores": {system: values[i] for system, values in scores.items()}},
        }
        for i in range(n)
    ]
