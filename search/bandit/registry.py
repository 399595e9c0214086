"""Policy names, the factory and the restorer."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from search.bandit.base import Policy
from search.bandit.contextual import Contextual
from search.bandit.ebucb import EmpiricalBayesUcb
from search.bandit.halving import SequentialHalving
from search.bandit.paper import Brute, EpsilonGreedy, Greedy
from search.bandit.stats import ArmStats

__all__ = [
    "DEFAULT_POLICY",
    "DEFAULT_SWITCH",
    "POLICIES",
    "default_choice",
    "make_policy",
    "policy_from_dict",
    "policy_from_parts",
]

POLICIES: dict[str, type[Policy]] = {
    cls.name: cls
    for cls in (Brute, Greedy, EpsilonGreedy, Contextual, SequentialHalving, EmpiricalBayesUcb)
}

# The platform's recommended method depends on the size of the topic set; docs/adr/0002 says
# why. Below DEFAULT_SWITCH topics: budget-aware Sequential Halving; from it on: EB-UCB.
DEFAULT_SWITCH = 30_000
DEFAULT_SMALL: tuple[str, dict[str, Any]] = ("sequential_halving", {"explore": 0.5, "eta": 3.0})
DEFAULT_LARGE: tuple[str, dict[str, Any]] = ("eb_ucb", {"beta": 6.0, "explore": 0.67})
DEFAULT_POLICY = DEFAULT_SMALL  # for the typical seed-000 tree (|T| = 3.2k)


def default_choice(n_topics: int) -> tuple[str, dict[str, Any]]:
    """The (policy name, parameters) that ``make_policy("default", ...)`` builds."""
    name, params = DEFAULT_SMALL if n_topics < DEFAULT_SWITCH else DEFAULT_LARGE
    return name, dict(params)


def make_policy(
    name: str, n_topics: int, k: int, rng: np.random.Generator, **params: Any
) -> Policy:
    """Build a policy by name; ``"default"`` is the recommended method.

    Explicit ``params`` override the default's.
    """
    if name == "default":
        name, defaults = default_choice(n_topics)
        params = {**defaults, **params}
    try:
        cls = POLICIES[name]
    except KeyError:
        known = ", ".join(sorted([*POLICIES, "default"]))
        raise ValueError(f"unknown policy {name!r}; known: {known}") from None
    return cls(n_topics, k, rng, **params)


def policy_from_dict(data: dict[str, Any]) -> Policy:
    """Restore a policy from ``Policy.to_dict``; future selections are identical."""
    policy = _bare_policy(data)
    policy._load(data)
    return policy


def policy_from_parts(header: dict[str, Any], changes: Iterable[dict[str, Any]]) -> Policy:
    """Restore a policy from ``Policy.header_to_dict`` and every ``stats.take_changes`` result
    saved since the policy was created, oldest first; future selections are identical."""
    stats = ArmStats.from_totals(header["stats"])
    for rows in changes:
        stats.apply_changes(rows)
    policy = _bare_policy(header)
    policy._load(header, stats)
    return policy


def _bare_policy(data: dict[str, Any]) -> Policy:
    cls = POLICIES[data["policy"]]
    policy = cls.__new__(cls)
    params = dict(data["params"])
    params.update(cls.restore_params(data))
    cls.__init__(policy, int(data["n_topics"]), int(data["k"]), np.random.default_rng(0), **params)
    return policy
