"""The same seed gives the same pulls: pinned digests of small runs' pull sequences.

Recorded before the run bookkeeping (state storage, policy cache) was reworked (issue 19): the
digests fix which topic every pull of every round went to, so any change to how the platform
stores, restores or caches a policy that alters a selection fails here.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from search.models import Pull
from search.runs import state
from search.runs.services import run_in_foreground, start_search_run
from tests.engines.factories import SyntheticEngineFactory
from tests.search.conftest import queue_rounds_settle_in_place, synthetic_run_config

PINNED = {
    # algorithm, topics, budget, batch: sha256 of "round:slot:arm" lines, first 16 hex digits
    ("default", 400, 600, 25): "1159835301e2956a",
    ("eb_ucb", 2000, 1500, 40): "6ac1b7d239fa76be",
    ("epsilon_greedy", 300, 400, 10): "53b26a3bf10088a9",
    ("sequential_halving", 500, 900, 30): "291004da7ff2df64",
}


@pytest.fixture(autouse=True)
def enqueued(monkeypatch):
    return queue_rounds_settle_in_place(monkeypatch)


def pull_digest(run) -> str:
    rows = Pull.objects.filter(run=run).order_by("round_index", "slot")
    lines = "\n".join(f"{r}:{s}:{a}" for r, s, a in rows.values_list("round_index", "slot", "arm"))
    return hashlib.sha256(lines.encode()).hexdigest()[:16]


@pytest.mark.parametrize(("algorithm", "topics", "budget", "batch"), list(PINNED))
def test_same_seed_same_pulls(db, algorithm, topics, budget, batch):
    SyntheticEngineFactory(name="world", params={"n_topics": topics, "seed": 3})
    config = synthetic_run_config(
        name=f"pinned {algorithm}", algorithm=algorithm, budget_pulls=budget, batch_size=batch,
        seed=11, k=5,
    )  # fmt: skip
    run = run_in_foreground(start_search_run(config, enqueue=False).pk)
    assert run.status == "finished", run.error
    assert run.pulls_done == budget
    assert pull_digest(run) == PINNED[(algorithm, topics, budget, batch)]


@pytest.mark.parametrize(
    ("algorithm", "topics", "budget", "batch"),
    [("default", 400, 600, 25), ("eb_ucb", 2000, 1500, 40)],
)
def test_the_policy_kept_between_rounds_makes_the_same_pulls(
    transactional_db, monkeypatch, algorithm, topics, budget, batch
):
    """Committed for real (on-commit hooks run), every round after the first takes the policy
    its process kept instead of rebuilding it from storage, and pulls the same topics."""
    loads = []
    original = state.load_policy
    monkeypatch.setattr(state, "load_policy", lambda run: loads.append(run.pk) or original(run))
    state.forget_kept()
    SyntheticEngineFactory(name="world", params={"n_topics": topics, "seed": 3})
    config = synthetic_run_config(
        name=f"pinned {algorithm}", algorithm=algorithm, budget_pulls=budget, batch_size=batch,
        seed=11, k=5,
    )  # fmt: skip
    run = run_in_foreground(start_search_run(config, enqueue=False).pk)
    assert run.status == "finished", run.error
    # Only the first round rebuilds (the start keeps nothing: its first round may run anywhere).
    assert loads == [run.pk]
    assert pull_digest(run) == PINNED[(algorithm, topics, budget, batch)]
    # Storage alone rebuilds the very same state.
    kept = state.policy_for_round(run)
    stored = state.load_policy(run)
    assert np.array_equal(kept.stats.sums, stored.stats.sums)
    assert np.array_equal(kept.stats.counts, stored.stats.counts)
    assert kept.top_k().tolist() == stored.top_k().tolist() == run.result["top_k"]
