"""Helpers of the breaker tests: seeds as JSONL and configs on the offline world."""

from __future__ import annotations

import json
from decimal import Decimal

from search.breaker.demo import EDITOR, FRAGILE, FRAGILE_QE, offline_world
from tests.engines.factories import EngineFactory

SEED_TEXTS = [
    "We walk to the old house by the river every morning before work.",
    "My friend has a small boat and a big plan for the summer holidays.",
    "The party was loud but the food was good and everyone stayed late.",
    "After dinner we talk about the noise in the street and the new neighbours.",
    "She was tired, so we left the mess in the kitchen for tomorrow.",
    "The dog ran past the house and into the park near the station.",
]


def jsonl_seeds(texts=SEED_TEXTS, **extra) -> dict:
    lines = [
        json.dumps({"text": t, "source_url": f"https://example.org/{i}", "doc_id": f"d{i}"})
        for i, t in enumerate(texts)
    ]
    return {"from": "jsonl", "lines": "\n".join(lines), "file": "seeds.jsonl", **extra}


def offline_config(method: str = "breaker_seeded", **overrides) -> dict:
    offline_world()
    return {
        "name": f"Offline {method}",
        "method": method,
        "llm": EDITOR,
        "targets": [FRAGILE],
        "qe": [FRAGILE_QE],
        "src_lang": "en",
        "tgt_lang": "cs",
        "seeds": jsonl_seeds(),
        "seed": 3,
        **overrides,
    }


# --- On the fake OpenAI-compatible server --------------------------------------------------


def remote_engines(base_url: str) -> None:
    """A paid LLM, translator and QE on the fake server."""
    for name in ("llm", "mt", "qe"):
        EngineFactory(name=name, model=f"model-{name}", base_url=base_url,
                      price_in_per_1k=Decimal(1), price_out_per_1k=Decimal(2))  # fmt: skip


def remote_config(method: str = "breaker_seeded_qe", **overrides) -> dict:
    return {
        "name": f"Remote {method}", "method": method, "llm": "llm", "targets": ["mt"],
        "qe": ["qe"], "src_lang": "en", "tgt_lang": "cs", "seeds": jsonl_seeds(SEED_TEXTS[:3]),
        "n_steps": 2, "seed": 0, **overrides,
    }  # fmt: skip
