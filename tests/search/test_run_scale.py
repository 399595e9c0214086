"""A run over a million synthetic topics: no per-topic rows, compact state, a sensible answer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from engines.registry import resolve
from search.models import Pull, Topic
from search.runs.selectors import run_summary, top_topics
from search.runs.services import restore_policy, run_in_foreground, start_search_run


def test_a_million_topic_synthetic_run(db):
    config = json.loads(Path("search/examples/synthetic_1m.json").read_text(encoding="utf-8"))
    config.update(budget_pulls=20_000, batch_size=5_000)
    run = run_in_foreground(start_search_run(config, enqueue=False).pk)

    assert run.status == "finished", run.error
    assert run.n_topics == 1_000_000
    assert run.pulls_done == Pull.objects.filter(run=run).count() == 20_000
    assert Topic.objects.count() == 0  # topics of a synthetic world are never rows
    # The bandit state is sparse: touched topics only, compressed.
    assert len(json.dumps(run.policy_state)) < 2_000_000
    policy = restore_policy(run)
    assert policy.stats.n_scored == 20_000 and policy.n_topics == 1_000_000
    summary = run_summary(run)
    world = resolve(run.difficulty_engine, "world")
    population = float(world.true_means.astype(np.float64).mean())
    # 0.02 pulls per topic: the pick cannot be the oracle's, but it is far above average.
    assert summary["true_top_k_mean"] > population + 10
    assert summary["oracle_top_k_mean"] > summary["true_top_k_mean"]
    rows = top_topics(run)
    assert len(rows) == 10 and rows[0].name.startswith("Synthetic topic #")
    assert run.worker_memory_mb > 0
