"""Offline demo data of the difficulty app (called by ``manage.py load_demo``; idempotent)."""

from __future__ import annotations

import json

import numpy as np

from difficulty import services as difficulty_services
from difficulty.models import DifficultyDataset

DIFFICULTY_DEMO_NAME = "Synthetic demo (not human scores)"
_WORDS = (
    "the council approved a new budget after long debate while critics warned that rising rents "
    "and delayed repairs would hurt families in older districts where the mayor promised more "
    "housing by spring although negotiations with contractors remain uncertain and several "
    "amendments concerning jurisdiction were postponed indefinitely"
).split()


def _difficulty_demo_lines(seed: int = 0) -> list[str]:
    """240 synthetic sources × 5 MT systems + a reference in two pairs.

    The scores are drawn, not collected: a latent difficulty per source (longer sources are
    harder on average), a skill per system, ESA-like noise, rounded and capped at 100. Labelled
    as synthetic in the dataset's name and description.
    """
    rng = np.random.default_rng(seed)
    n = 240
    latent = rng.normal(size=n)
    lengths = np.clip(np.round(10 + 5 * latent + rng.normal(0, 4, n)), 2, 40).astype(int)
    sources = [" ".join(rng.choice(_WORDS, size=k)).capitalize() + "." for k in lengths]
    systems = [f"demo-mt-{i}" for i in range(1, 6)] + ["refA"]
    skill = {name: rng.normal(0, 5) for name in systems} | {"refA": 4.0}
    lines = []
    for langs in ("en-de", "en-cs"):
        shift = rng.normal(0, 2)
        for i, source in enumerate(sources):
            scores = {
                name: float(
                    np.clip(
                        np.round(90 + shift + skill[name] - 8 * latent[i] + rng.normal(0, 12)),
                        0,
                        100,
                    )
                )
                for name in systems
            }
            lines.append(
                json.dumps(
                    {
                        "langs": langs,
                        "line_id": i + 1,
                        "doc_id": f"demo-{i // 8}",
                        "domain": "synthetic",
                        "src": source,
                        "tgt": {name: f"[{name}] {source}" for name in systems},
                        "scores": scores,
                    }
                )
            )
    return lines


def load_demo(stdout) -> None:
    if DifficultyDataset.objects.filter(name=DIFFICULTY_DEMO_NAME).exists():
        return
    dataset = difficulty_services.import_difficulty_dataset(
        _difficulty_demo_lines(),
        name=DIFFICULTY_DEMO_NAME,
        description=(
            "Synthetic scores for the offline demo: drawn from a model in which longer sources "
            "are harder, not collected from people. Import a real WMT-style file to evaluate "
            "estimators for real."
        ),
    )
    evaluation = difficulty_services.start_difficulty_evaluation(
        dataset,
        ["oracle-src", "oracle-src-lang", "length", "chars", "rarity", "random"],
        n_bootstrap=100,
        enqueue=False,
    )
    difficulty_services.run_difficulty_evaluation(evaluation.pk)
    stdout.write(f"difficulty: dataset {dataset.name!r} with a finished DEC evaluation")
