"""One recovery sweep for every kind of long job.

Messages get lost: a broker restarts, a worker dies between a round's commit and the next
message, a queue is purged. Every kind of job registers how to find its stalled rows and queue
them again; beat runs :func:`sweep` every minute and a starting worker runs it once for the
claims its dead predecessor left (``dead_worker_prefix``). Re-queuing is always safe: rounds
claim their row with a lease and drop messages that are stale.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

logger = logging.getLogger(__name__)


class Recoverable(Protocol):
    """What the sweep needs of a kind: a name, and ``recover(dead_worker_prefix)`` that queues
    its stalled jobs and returns their ids (a :class:`rounds.LeasedJobKind` is one)."""

    @property
    def name(self) -> str: ...

    def recover(self, dead_worker_prefix: str | None = None) -> list[int]: ...


@dataclass(frozen=True)
class JobKind:
    """A recovery written by hand: ``recover(dead_worker_prefix)`` queues stalled jobs."""

    name: str
    recover: Callable[[str | None], list[int]]


_KINDS: dict[str, Recoverable] = {}


def register(*kinds: Recoverable) -> None:
    """The one way to have the sweep recover a kind of job: ``rounds.register(KIND, ...)`` in
    the app's ``AppConfig.ready``; registering a name again replaces it."""
    for kind in kinds:
        _KINDS[kind.name] = kind


def registered() -> list[str]:
    return sorted(_KINDS)


def sweep(dead_worker_prefix: str | None = None) -> dict[str, list[int]]:
    """Recover every registered kind; one kind failing never stops the others."""
    recovered: dict[str, list[int]] = {}
    for name in sorted(_KINDS):
        try:
            ids = _KINDS[name].recover(dead_worker_prefix)
        except Exception:
            logger.exception("recovery of %s jobs failed; the next sweep tries again", name)
            continue
        if ids:
            recovered[name] = ids
            logger.info("recovered %s jobs: %s", name, ids)
    return recovered
