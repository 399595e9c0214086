"""The offline MT-breaker world (a SIMULATION) and the demo comparison for ``load_demo``.

``offline_world`` creates the simulated engines (``engines.offline.breaker_world``): an editor
"LLM", two fragile translators with different weaknesses and a QE that penalises exactly them. The
demo compares every method of seed 001 on 8 seeds from the demo topics' corpus (en→cs), run in
the foreground here (about a second), then computes each run's data-quality statistics (Table 2)
with the offline hashed n-gram embeddings and the editor as analyst; idempotent by comparison
name.
"""

from __future__ import annotations

from typing import Any

from engines.models import Engine
from engines.services import save_engine
from search.breaker.config import BreakerConfigError
from search.breaker.data_quality import start_statistics, statistics_in_foreground
from search.breaker.methods import METHODS
from search.breaker.services import run_in_foreground, start_breaker_comparison
from search.models import BreakerRun, TopicTree

__all__ = [
    "DEMO_COMPARISON",
    "EMBEDDINGS",
    "OFFLINE_ENGINES",
    "load_breaker_demo",
    "offline_world",
]

DEMO_COMPARISON = "Demo: all methods on the offline world"
EDITOR, FRAGILE, FRAGILE_B, FRAGILE_QE = (
    "sim-editor",
    "sim-fragile-mt",
    "sim-fragile-mt-b",
    "sim-qe",
)
EMBEDDINGS = "sim-embeddings"
DEMO_DIFFICULTY = "rarity"  # the heuristic the engines demo creates, if it is there
OFFLINE_ENGINES: list[dict[str, Any]] = [
    {"name": EDITOR, "kind": "breaker_editor", "capabilities": ["chat"],
     "description": "SIMULATION: edits texts by rules in seed 001's formats."},
    {"name": FRAGILE, "kind": "fragile_mt", "capabilities": ["translate"],
     "description": "SIMULATION: fails on rare words, idioms, numbers and long sentences."},
    {"name": FRAGILE_B, "kind": "fragile_mt", "capabilities": ["translate"],
     "params": {"fails_on": ["rare", "idiom"]},
     "description": "SIMULATION: fails on rare words and idioms only."},
    {"name": FRAGILE_QE, "kind": "fragile_qe", "capabilities": ["quality"],
     "description": "SIMULATION: penalises exactly the fragile translators' failures."},
    {"name": EMBEDDINGS, "kind": "hashed_embeddings", "capabilities": ["embed"],
     "description": "OFFLINE: hashed character 3–5-grams (lexical similarity, not semantics)."},
]  # fmt: skip


def offline_world() -> list[Engine]:
    """The simulated engines, created once."""
    return [
        Engine.objects.filter(name=spec["name"]).first() or save_engine(spec)
        for spec in OFFLINE_ENGINES
    ]


def demo_config(seeds: dict, **overrides) -> dict:
    return {
        "name": DEMO_COMPARISON,
        "methods": list(METHODS),
        "llm": EDITOR,
        "targets": [FRAGILE],
        "qe": [FRAGILE_QE],
        "src_lang": "en",
        "tgt_lang": "cs",
        "seeds": seeds,
        "seed": 1,
        **overrides,
    }


def load_breaker_demo(stdout, *, tree_name: str = "Demo topics") -> None:
    if BreakerRun.objects.filter(comparison=DEMO_COMPARISON).exists():
        return
    offline_world()
    tree = TopicTree.objects.filter(name=tree_name).first()
    if tree is None:
        stdout.write(f"search: breaker demo skipped: no topic tree {tree_name!r}")
        return
    seeds = {"from": "topic_tree", "tree": tree.pk, "n": 8, "sample_seed": 5}
    try:
        runs = start_breaker_comparison(demo_config(seeds), enqueue=False)
    except BreakerConfigError as exc:
        stdout.write(f"search: breaker demo skipped: {exc}")
        return
    difficulty = DEMO_DIFFICULTY if Engine.objects.filter(name=DEMO_DIFFICULTY).exists() else None
    for run in runs:
        run = run_in_foreground(run.pk)
        stats = start_statistics(
            run, embedder=EMBEDDINGS, analyst=EDITOR, difficulty=difficulty, enqueue=False
        )
        statistics_in_foreground(stats.pk)
    stdout.write(f"search: breaker comparison {DEMO_COMPARISON!r} ({len(runs)} methods)")
