"""Offline demo engines: heuristics, a synthetic world and replayed WMT24 data; no network, no keys.

Idempotent: engines are created or updated by name; replay rows are upserted by key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings

from engines.models import Engine
from engines.services import register_replay, save_engine

# Real data beside the checkout (CI has ../shared); the demo reads it in place, never copies it.
WMT24_PATH = Path(settings.SHARED_DATA_DIR) / "wmt24_esa_en-cs.jsonl"
REPLAY_NAME = "wmt24-en-cs"
REPLAY_SYSTEM = "GPT-4"
HUMAN_REFERENCES = {"refA", "refB"}

LOCAL = {"capabilities": ["difficulty"], "model": "", "base_url": "", "api_key_env": ""}

DEMO_ENGINES: list[dict[str, Any]] = [
    {
        **LOCAL,
        "name": "length",
        "kind": "heuristic",
        "description": "Text length in wordfreq tokens (longer = harder), seed 002 §4.1.",
        "params": {"feature": "tokens"},
    },
    {
        **LOCAL,
        "name": "chars",
        "kind": "heuristic",
        "description": "Text length in characters (longer = harder).",
        "params": {"feature": "chars"},
    },
    {
        **LOCAL,
        "name": "rarity",
        "kind": "heuristic",
        "description": "Mean wordfreq frequency of the words (rarer = harder), seed 002 §4.1.",
        "params": {"feature": "rarity"},
    },
    {
        **LOCAL,
        "name": "synthetic-3k",
        "kind": "synthetic",
        "description": "Synthetic topic world of seed 000 §3.3 with 3,200 topics, for benchmarks "
        "and the offline demo. Texts are ids 'synthetic:<topic>:<draw>'.",
        "params": {"n_topics": 3200, "seed": 0},
    },
]


def _wmt24_rows() -> tuple[list[dict[str, Any]], list[str]]:
    rows: list[dict[str, Any]] = []
    systems: set[str] = set()
    with WMT24_PATH.open(encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            for system, translation in item["tgt"].items():
                score = item["scores"].get(system)
                rows.append(
                    {"source": item["src"], "system": system, "translation": translation,
                     "score": score}
                )  # fmt: skip
                if system not in HUMAN_REFERENCES:
                    systems.add(system)
    return rows, sorted(systems)


def load_demo(stdout) -> None:
    for data in DEMO_ENGINES:
        existing = Engine.objects.filter(name=data["name"]).first()
        save_engine(data, existing)
    stdout.write(f"engines: {', '.join(d['name'] for d in DEMO_ENGINES)}")

    if not WMT24_PATH.is_file():
        stdout.write(f"engines: {WMT24_PATH} is absent; the replay demo engine is skipped")
        return
    rows, systems = _wmt24_rows()
    replay = {
        **LOCAL,
        "name": REPLAY_NAME,
        "kind": "replay",
        "capabilities": ["translate", "quality", "difficulty"],
        "description": "WMT24 en→cs translations and human ESA scores, replayed (translate "
        f"returns {REPLAY_SYSTEM}'s output; estimate averages the MT systems' human scores).",
        "params": {"system": REPLAY_SYSTEM, "systems": systems},
    }
    engine = save_engine(replay, Engine.objects.filter(name=REPLAY_NAME).first())
    count = register_replay(engine, rows, src_lang="en", tgt_lang="cs")
    stdout.write(f"engines: {REPLAY_NAME} replays {count} translations with scores")
