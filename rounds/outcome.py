"""What a round reports to its caller, the same for every kind of long job."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    MORE = "more"  # the job goes on: run the next round
    WAITING = "waiting"  # idle until something outside arrives (human scores)
    DONE = "done"  # the job finished in this round
    STOPPED = "stopped"  # paused, cancelled or failed (the row says which and why)
    STALE = "stale"  # an old or duplicate message: the job moved on without it
    BUSY = "busy"  # another worker holds the lease: try again after ``retry_in``
    RETRY = "retry"  # a transient error: try the same round again after ``retry_in``


@dataclass(frozen=True)
class Outcome:
    status: Status
    retry_in: float | None = None

    @property
    def wants_successor(self) -> bool:
        """Whether the caller should queue another round (the next one or this one again)."""
        return self.status in (Status.MORE, Status.BUSY, Status.RETRY)

    @property
    def repeats_round(self) -> bool:
        """Whether the successor is this same round again (a lease or an error got in the way)."""
        return self.status in (Status.BUSY, Status.RETRY)


class Busy(RuntimeError):
    """A foreground loop found the job held by a worker."""
