"""Read queries for search runs: summaries, the current top-k with their texts, costs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import Count, QuerySet

from core.access import visible_or_404
from engines.registry import resolve
from engines.selectors import cost_by_scope
from search.access import may_use_search
from search.models import Pull, SearchRun, Topic
from search.runs.services import restore_policy

__all__ = [
    "LARGE_FIELDS",
    "TopicRow",
    "cost_per_engine",
    "human_counts",
    "pulls_of_arm",
    "run_for_user",
    "run_rows",
    "run_summary",
    "runs_for_user",
    "top_topics",
]


def _finite(value: float) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def run_summary(run: SearchRun) -> dict[str, Any]:
    """The shape ``run_search --json`` prints (oracle fields only where the truth is known)."""
    result = run.result or {}
    summary: dict[str, Any] = {
        "run": run.pk,
        "status": run.status,
        "pulls": run.pulls_done,
        "budget": run.budget_pulls,
        "top_k": result.get("top_k", []),
        "top_k_mean": result.get("top_k_mean"),
        "cost": float(run.cost),
    }
    if run.sampler == SearchRun.Sampler.SYNTHETIC:
        summary["true_top_k_mean"] = result.get("true_top_k_mean")
        summary["oracle_top_k_mean"] = result.get("oracle_top_k_mean")
    if run.error:
        summary["error"] = run.error
    return summary


@dataclass(frozen=True)
class TopicRow:
    rank: int
    arm: int
    name: str
    topic: Topic | None
    mean: float | None
    count: int
    lower: float | None
    upper: float | None
    true_mean: float | None
    # The empirical-Bayes estimate the interval surrounds: few pulls pull it towards the mean of
    # all topics, so it can sit well below a lucky topic's raw mean.
    posterior_mean: float | None = None


def top_topics(run: SearchRun, limit: int | None = None) -> list[TopicRow]:
    """The run's current recommendation, best first, with estimates and intervals."""
    if not run.policy_state:
        return []
    policy = restore_policy(run)
    top = policy.top_k()[: limit or run.k]
    estimates = policy.estimates(top)
    topics = (
        {t.arm: t for t in Topic.objects.filter(tree_id=run.tree_id, arm__in=[int(a) for a in top])}
        if run.tree_id
        else {}
    )
    truth = (
        resolve(run.difficulty_engine, "world").true_means
        if run.sampler == SearchRun.Sampler.SYNTHETIC
        else None
    )
    rows = []
    for i, arm in enumerate(int(a) for a in top):
        topic = topics.get(arm)
        rows.append(
            TopicRow(
                rank=i + 1,
                arm=arm,
                name=topic.path if topic else f"Synthetic topic #{arm}",
                topic=topic,
                mean=_finite(estimates.mean[i]),
                count=int(estimates.count[i]),
                lower=_finite(estimates.lower[i]),
                upper=_finite(estimates.upper[i]),
                true_mean=float(truth[arm]) if truth is not None else None,
                posterior_mean=_finite(estimates.posterior_mean[i]),
            )
        )
    return rows


def pulls_of_arm(run: SearchRun, arm: int, limit: int = 20):
    """The texts drawn for one topic, hardest first, with translations and scores."""
    return (
        Pull.objects.filter(run=run, arm=arm)
        .select_related("sample", "topic")  # the source URL lives on the sample
        .order_by("-difficulty", "id")[:limit]
    )


def cost_per_engine(run: SearchRun) -> dict[str, Any]:
    return cost_by_scope(run.scope)


# --- Access -------------------------------------------------------------------------------------


def runs_for_user(user) -> QuerySet[SearchRun]:
    if not may_use_search(user):
        return SearchRun.objects.none()
    return SearchRun.objects.all()


# The run's large JSON columns: the bandit state of a 1M-topic run is megabytes, and the status
# poll (every 2 s per open page) shows none of them.
LARGE_FIELDS = ("policy_state", "history", "result", "calibration")


def run_for_user(user, pk: int, *, without: tuple[str, ...] = ()) -> SearchRun:
    """The one permission-checked accessor for search runs (pages, API and exports).

    ``without`` names fields the caller does not need (loaded on access if it does after all).
    """
    rows = runs_for_user(user).select_related(
        "tree", "difficulty_engine", "sampler_engine", "campaign"
    )
    return visible_or_404(rows.defer(*without), pk, "No such search run.")


def run_rows(user) -> QuerySet[SearchRun]:
    """The run list: every column the list shows, without the large JSON fields."""
    return (
        runs_for_user(user)
        .select_related("tree", "difficulty_engine", "created_by")
        .defer(*LARGE_FIELDS)
    )


def human_counts(run: SearchRun) -> dict[str, int]:
    """Pulls sent to annotators, received back, and applied to the bandit (one query)."""
    counts = dict(
        Pull.objects.filter(run=run)
        .exclude(human_status=Pull.HumanStatus.NONE)
        .order_by()
        .values_list("human_status")
        .annotate(n=Count("id"))
    )
    received = counts.get(Pull.HumanStatus.RECEIVED, 0)
    applied = counts.get(Pull.HumanStatus.APPLIED, 0)
    # Every received or applied pull was sent first: "sent" counts all of them.
    return {
        "sent": counts.get(Pull.HumanStatus.SENT, 0) + received + applied,
        "received": received + applied,
        "applied": applied,
    }
