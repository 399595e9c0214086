"""Bandit search for difficult topics (seed 000), pure numpy: no Django import.

``make_policy(name, n_topics, k, rng, **params)`` builds a policy; ``policy_from_dict`` restores
one from ``Policy.to_dict()``, ``policy_from_parts`` from ``Policy.header_to_dict()`` and the
rows of ``ArmStats.take_changes()`` saved since (the platform's incremental state).
"""

from search.bandit.base import Estimates, Policy
from search.bandit.contextual import Neighbours, jaccard
from search.bandit.prior import GridPrior, NormalPrior, fit_prior
from search.bandit.registry import (
    DEFAULT_POLICY,
    DEFAULT_RICH_BUDGET,
    DEFAULT_SWITCH,
    POLICIES,
    default_choice,
    make_policy,
    policy_from_dict,
    policy_from_parts,
    resolve_policy,
)

__all__ = [
    "DEFAULT_POLICY",
    "DEFAULT_RICH_BUDGET",
    "DEFAULT_SWITCH",
    "POLICIES",
    "Estimates",
    "GridPrior",
    "Neighbours",
    "NormalPrior",
    "Policy",
    "default_choice",
    "fit_prior",
    "jaccard",
    "make_policy",
    "policy_from_dict",
    "policy_from_parts",
    "resolve_policy",
]
