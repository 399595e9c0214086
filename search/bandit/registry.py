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
    "DEFAULT_RICH_BUDGET",
    "DEFAULT_SWITCH",
    "POLICIES",
    "default_choice",
    "make_policy",
    "policy_from_dict",
    "policy_from_parts",
    "resolve_policy",
]

POLICIES: dict[str, type[Policy]] = {
    cls.name: cls
    for cls in (Brute, Greedy, EpsilonGreedy, Contextual, SequentialHalving, EmpiricalBayesUcb)
}

# The platform's recommended method depends on the size of the topic set and the budget per
# topic; docs/adr/0002 and 0028 say why. Below DEFAULT_SWITCH topics, or with at least
# DEFAULT_RICH_BUDGET pulls per topic: budget-aware Sequential Halving (equal allocation reaches
# the oracle there at every noise level measured); otherwise EB-UCB, whose index narrows
# (beta 6 -> 3) once its probe pairs measure a per-text noise sd of 22.5 or more. The noise is
# not known when the run starts, so the choice between methods uses only what is (size and
# budget) and the noise enters inside EB-UCB, from its own estimate.
DEFAULT_SWITCH = 30_000
DEFAULT_RICH_BUDGET = 2.0
DEFAULT_SMALL: tuple[str, dict[str, Any]] = ("sequential_halving", {"explore": 0.5, "eta": 3.0})
DEFAULT_LARGE: tuple[str, dict[str, Any]] = (
    "eb_ucb",
    {"beta": 6.0, "beta_noisy": 3.0, "explore": 0.67},
)
DEFAULT_POLICY = DEFAULT_SMALL  # for the typical seed-000 tree (|T| = 3.2k)


def default_choice(n_topics: int, budget: int | None = None) -> tuple[str, dict[str, Any]]:
    """The (policy name, parameters) that ``make_policy("default", ...)`` builds."""
    rich = budget is not None and budget >= DEFAULT_RICH_BUDGET * n_topics
    name, params = DEFAULT_SMALL if n_topics < DEFAULT_SWITCH or rich else DEFAULT_LARGE
    return name, dict(params)


def resolve_policy(
    name: str, n_topics: int, params: dict[str, Any], budget: int | None = None
) -> tuple[str, dict[str, Any]]:
    """The concrete (policy name, parameters) that ``make_policy(name, ...)`` builds: "default"
    becomes the recommended method for ``n_topics`` and ``budget`` with the caller's ``params``
    on top (``params`` never holds the budget here)."""
    if name != "default":
        return name, dict(params)
    chosen, defaults = default_choice(n_topics, budget)
    return chosen, {**defaults, **params}


def make_policy(
    name: str, n_topics: int, k: int, rng: np.random.Generator, **params: Any
) -> Policy:
    """Build a policy by name; ``"default"`` is the recommended method.

    Explicit ``params`` override the default's.
    """
    rest = {key: value for key, value in params.items() if key != "budget"}
    name, chosen = resolve_policy(name, n_topics, rest, params.get("budget"))
    params = {**chosen, **({"budget": params["budget"]} if "budget" in params else {})}
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
