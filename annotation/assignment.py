"""The assignment-policy registry: how next-item picks among the open items, by name (ADR 0051).

The default policy, ``ordered``, is next-item as it always was: the first open item in the
annotator's order (position, or their seeded permutation), found by one locking statement in
``services/claims.py``. It has no code here and every campaign keeps it unless staff choose
another.

Any other policy (issue 42: adaptive multi-system campaigns) is registered from an
``AppConfig.ready()`` by the app that owns its maths, as protocols are: annotation knows none
of them. Next-item still decides *which* items may be handed out (overlap caps, live claims,
quota, tutorials, attention checks); the policy only orders the open regular items it is shown.
It sees the campaign as cells, one per regular item (a system's output on a segment), with the
human judgments that count (submitted scores of annotators not failed by quality control) and
an optional prior: an automatic score of each cell read from the items' ``meta`` under the
campaign's ``assignment_prior`` key. After submissions the policy also says whether the
campaign's goal is settled (``services/adaptive.py`` closes the campaign when it is).

Pure Python and numpy: no Django import.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "DEFAULT",
    "GOALS",
    "AssignmentPolicy",
    "Cells",
    "Goal",
    "GoalReport",
    "UnknownPolicy",
    "choices",
    "get",
    "is_known",
    "register",
    "unregister",
]

DEFAULT = "ordered"
DEFAULT_LABEL = "In order (each annotator's item order, as always)"
NAME_MAX_LENGTH = 32
_NAME = re.compile(r"[a-z][a-z0-9_-]*")

GOALS = {
    "top": "The top cluster",
    "adjacent": "Every pair of neighbours in the ranking",
    "full": "The full ranking, within a tolerance",
}


@dataclass(frozen=True)
class Cells:
    """A campaign's regular items as (system, segment) cells, one entry per item, in id order.

    ``system_of`` and ``segment_of`` index ``systems`` (names, sorted) and ``segments``
    (``(doc_id, seg_id)``, sorted); ``judgments`` and ``score_sums`` hold the human scores
    that count; ``priors`` the automatic score of each cell (NaN where there is none); ``cap``
    is the campaign's overlap.
    """

    item_ids: NDArray[np.int64]
    system_of: NDArray[np.intp]
    segment_of: NDArray[np.intp]
    systems: Sequence[str]
    segments: Sequence[tuple[str, str]]
    judgments: NDArray[np.intp]
    score_sums: NDArray[np.float64]
    priors: NDArray[np.float64]
    cap: int

    @property
    def judged(self) -> int:
        return int(self.judgments.sum())


@dataclass(frozen=True)
class Goal:
    """What the campaign must settle, at which significance level."""

    name: str = "top"
    alpha: float = 0.05
    tolerance: float = 0.0  # goal "full": systems closer than this may stay tied


@dataclass
class GoalReport:
    """One check of the goal: settled for good, the checks so far (``history``, kept by the
    caller between checks) and the current ranking (``systems`` best first, with their mean
    human score, cluster and counted judgments). JSON-serializable."""

    settled: bool
    history: list[Any] = field(default_factory=list)
    systems: list[dict[str, Any]] = field(default_factory=list)


class AssignmentPolicy(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def label(self) -> str: ...

    def rank(
        self, cells: Cells, open_items: Sequence[int], goal: Goal, seed: Sequence[int], size: int
    ) -> list[int]:
        """Up to ``size`` ids of ``open_items`` (regular items the annotator may take now),
        best first; deterministic for one ``seed``."""
        ...

    def check(
        self, cells: Cells, goal: Goal, history: Sequence[Any], seed: Sequence[int]
    ) -> GoalReport:
        """The goal checked once more on the counted judgments, after ``history``."""
        ...


class UnknownPolicy(LookupError):
    def __init__(self, name: Any):
        known = ", ".join([DEFAULT, *_registry])
        super().__init__(f"unknown assignment policy {name!r}; known policies: {known}")


_registry: dict[str, AssignmentPolicy] = {}


def register(policy: AssignmentPolicy) -> AssignmentPolicy:
    """Offer ``policy`` to campaigns under ``policy.name``; returns it. A taken name (the
    default's too) or one that is not a short lowercase identifier is refused."""
    name = getattr(policy, "name", None)
    if not isinstance(name, str) or not _NAME.fullmatch(name) or len(name) > NAME_MAX_LENGTH:
        raise ValueError(
            f"assignment policy name {name!r} must be lowercase letters, digits, '-' or '_' "
            f"(at most {NAME_MAX_LENGTH} characters)"
        )
    if name == DEFAULT or name in _registry:
        raise ValueError(f"an assignment policy named {name!r} is already registered")
    _registry[name] = policy
    return policy


def unregister(name: str) -> None:
    """Forget a policy (tests that register their own); unknown names raise."""
    if name not in _registry:
        raise UnknownPolicy(name)
    del _registry[name]


def get(name: str) -> AssignmentPolicy:
    """The registered policy called ``name`` (never the default, which has no object)."""
    try:
        return _registry[name]
    except (KeyError, TypeError):
        raise UnknownPolicy(name) from None


def is_known(name: Any) -> bool:
    return name == DEFAULT or (isinstance(name, str) and name in _registry)


def choices() -> list[tuple[str, str]]:
    """(name, label) of the default and of every registered policy, for forms and pages."""
    return [(DEFAULT, DEFAULT_LABEL), *((p.name, p.label) for p in _registry.values())]
