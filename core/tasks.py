from __future__ import annotations

from celery import shared_task

import rounds
from core import health


@shared_task(name=health.PROBE_TASK)
def complete_probe(probe_id: int) -> None:
    """Mark a worker probe as completed by this worker (the broker → worker → DB round trip)."""
    health.complete_probe(probe_id, hostname=complete_probe.request.hostname or "")


@shared_task(name="rounds.sweep")
def sweep_jobs() -> None:
    """Beat's periodic recovery of every kind of long job whose message was lost."""
    rounds.sweep()
