"""The loop the ``--foreground`` commands use: every round of a job in this process."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable

from rounds.outcome import Busy, Outcome, Status


def foreground_worker() -> str:
    """A worker name for this process (claims carry it, so its leases are recognisable)."""
    return f"foreground@{socket.gethostname()}:{os.getpid()}"


def run_in_foreground(
    advance: Callable[[], Outcome], *, sleep: Callable[[float], None] = time.sleep
) -> Outcome:
    """Call ``advance`` (one round) until the job stops asking for more.

    A transient error waits and runs the round again; a job another worker holds raises
    :class:`Busy` (running it here too would only wait on that worker's lease).
    """
    while True:
        outcome = advance()
        if outcome.status is Status.MORE:
            continue
        if outcome.status is Status.RETRY:
            sleep(outcome.retry_in or 1.0)
            continue
        if outcome.status is Status.BUSY:
            raise Busy(f"held by another worker; try again in {outcome.retry_in or 1:.0f} s")
        return outcome
