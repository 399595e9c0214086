"""One kind of round-based job, described once: the lifecycle every such job shares.

Mining, rule generation, lexical evaluations and breaker transfers each ran the same five
steps around their own round — claim the row, explain a claim that failed, fail for good,
cancel, re-queue stalled rows, and run every round in the foreground — with only the model, the
round function and the wording changing. :class:`LeasedJobKind` holds those differences; a
services module builds one after its round function and exports its bound methods under the
names callers already use (``cancel_job = RULE_JOBS.cancel``).

The model needs the lease fields (:mod:`rounds.leases`), ``status`` with ``QUEUED``/``RUNNING``/
``FAILED``/``CANCELLED`` members, ``ACTIVE`` (the statuses a round may run in), ``round_index``,
``error`` and ``finished_at``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Model
from django.utils import timezone

from rounds.foreground import foreground_worker, run_in_foreground
from rounds.leases import claim, release, requeue_stalled, retry_after_lease
from rounds.outcome import Busy, Outcome, Status
from rounds.recovery import JobKind, register

_MAX_ERROR = 5000


def round_lease() -> timedelta:
    """How long a round may hold its job before another worker may take it over."""
    return timedelta(seconds=settings.SEARCH_ROUND_LEASE_S)


# Not frozen: a test may swap one part (e.g. enqueue_round) with monkeypatch.
@dataclass(eq=False)
class LeasedJobKind:
    """What differs between kinds of round-based job.

    ``advance(pk, round_index, worker=...)`` runs one round; ``enqueue_round(pk, index)``
    queues one; ``state_error`` is what a refused cancel or a busy foreground run raises;
    ``label`` names one job in messages ("rule job"); ``sweep_name`` is the name the shared
    recovery sweep reports; ``lease`` is how long a round holds its job; ``cost`` (optional)
    reads a job's spend when it fails.
    """

    label: str
    sweep_name: str
    model: type[Model]
    advance: Callable[..., Outcome]
    enqueue_round: Callable[..., None]
    state_error: type[Exception]
    lease: Callable[[], timedelta] = round_lease
    cost: Callable[[int], Any] | None = None

    @property
    def _objects(self) -> Any:
        return self.model._default_manager

    def claim(self, pk: int, round_index: int, worker: str) -> bool:
        """Claim round ``round_index`` of an active job for ``worker`` (status becomes running)."""
        model: Any = self.model
        rows = self._objects.filter(pk=pk, round_index=round_index, status__in=model.ACTIVE)
        return claim(rows, worker, self.lease(), status=model.Status.RUNNING)

    def unclaimed_outcome(self, pk: int, round_index: int) -> Outcome:
        """Why a round could not claim its job: it moved on, someone holds it, or it ended."""
        job = self._objects.filter(pk=pk).first()
        if job is None or job.round_index != round_index:
            return Outcome(Status.STALE)
        if job.status in job.ACTIVE and job.claimed_by:
            return Outcome(Status.BUSY, retry_in=retry_after_lease(job.lease_expires_at))
        return Outcome(Status.STOPPED)

    def fail(self, pk: int, worker: str, message: str) -> None:
        """End the job as failed, releasing ``worker``'s lease (and recording its cost)."""
        changes: dict[str, Any] = {
            "status": self.model.Status.FAILED,  # type: ignore[attr-defined]
            "error": message[:_MAX_ERROR],
            "finished_at": timezone.now(),
        }
        if self.cost is not None:
            changes["cost"] = self.cost(pk)
        release(self._objects.filter(pk=pk), worker, **changes)

    def cancel(self, job: Any) -> Any:
        """End the job for good; the round in flight still records what it paid for."""
        now = timezone.now()
        updated = self._objects.filter(pk=job.pk, status__in=job.ACTIVE).update(
            status=job.Status.CANCELLED, finished_at=now, updated_at=now
        )
        if not updated:
            state = job.get_status_display().lower()
            raise self.state_error(f"a {state} {self.label} cannot be cancelled")
        job.refresh_from_db()
        return job

    def recover(self, dead_worker_prefix: str | None = None) -> list[int]:
        """Queue the current round of this kind's jobs nobody works on (the sweep's part)."""
        model: Any = self.model
        return requeue_stalled(
            self._objects.filter(status__in=model.ACTIVE),
            self.lease(),
            self.enqueue_round,
            dead_worker_prefix=dead_worker_prefix,
            fields=("pk", "round_index"),
        )

    def register_recovery(self) -> None:
        """Called from an ``AppConfig.ready``: the shared sweep recovers this kind too."""
        register(JobKind(self.sweep_name, self.recover))

    def run_in_foreground(self, pk: int, *, worker: str | None = None) -> Any:
        """Every round of a job in this process until it finishes or stops."""
        worker = worker or foreground_worker()

        def advance() -> Outcome:
            index = self._objects.values_list("round_index", flat=True).get(pk=pk)
            return self.advance(pk, index, worker=worker)

        try:
            run_in_foreground(advance)
        except Busy:
            message = f"{self.label} {pk} is being run by a worker; try again later"
            raise self.state_error(message) from None
        return self._objects.get(pk=pk)
