"""One kind of round-based job, described once: the lifecycle every such job shares.

Every long job of the platform (search runs, breaker runs, statistics and transfers, DEC
evaluations, imports, topic-tree generations, mining, rule jobs, lexical evaluations) runs the
same steps around its own work: claim the row, explain a claim that failed, run the work under
one guard (:meth:`LeasedJobKind.advance`), fail for good, cancel, re-queue stalled rows,
and run every round in the foreground. :class:`LeasedJobKind` holds what differs between kinds;
a services module builds one after its round's work and commit and exports its bound methods
under the names callers already use (``advance_job = RULE_JOBS.advance``).

How to add a job kind
---------------------
1. The model inherits :class:`rounds.models.RoundJob` (rounds carry a number: ``round_index``
   and ``cost`` come with it) or :class:`rounds.models.LeasedJob` (one message per job, whose
   row says what is left); a different status vocabulary redeclares ``Status``, ``status``,
   ``ACTIVE`` (the statuses a round may claim), ``ENDED`` and ``SUCCEEDED``.
2. In ``<app>/<kind>/services.py``: ``enqueue_round(pk, round_index, *, countdown=None)``
   queuing the task by name (:func:`rounds.enqueue`), the round's two halves, and the kind::

       def _work(pk, worker):  # engine calls, outside any transaction
           ...
       def _commit(job, done) -> rounds.Status:  # in the round's transaction, the job locked
           ...  # write ``done``; return THINGS.after_round(job, more=...)
       THINGS = rounds.LeasedJobKind(
           label="thing", sweep_name="thing", model=Thing, work=_work, commit=_commit,
           enqueue_round=enqueue_round, state_error=ThingStateError, **ENGINE_ERRORS,
       )
       advance_thing = THINGS.advance  # the round: claim, work, commit, under the guard

   ``transient`` (in ``engines.interfaces.ENGINE_ERRORS``: an engine's ``not exc.permanent``)
   is how the kind tells an error worth retrying, passed in so that this package imports no app.
3. The task (``<app>/tasks.py``): ``rounds.run_round(self, services.advance_thing,
   services.enqueue_round, pk, round_index)`` (:func:`rounds.run_job_round` for a kind whose
   rounds carry no number). It retries a round whose database went away.
4. ``rounds.register(THINGS)`` in the app's ``AppConfig.ready``: the shared sweep recovers it.
5. Start the job from a service named for what it does (``start_thing``), which validates,
   creates the row and queues round 0 on commit; cancel with ``THINGS.cancel``; the command's
   ``--foreground`` with ``THINGS.run_in_foreground``.
6. A fault test: add the kind to ``tests/faults/kinds.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Model
from django.utils import timezone

from rounds.foreground import foreground_worker, run_in_foreground
from rounds.leases import claim, release, requeue_stalled, retry_after_lease
from rounds.outage import database_lost
from rounds.outcome import Busy, Outcome, Status

__all__ = [
    "TRANSIENT_RETRY_S",
    "LeaseLost",
    "LeasedJobKind",
    "error_text",
    "internal_error",
    "round_lease",
]

logger = logging.getLogger(__name__)

_MAX_ERROR = 5000
# How long a round that met a transient error (an engine's rate limit, a timeout) waits before
# it runs again: long enough for a rate limit's window to pass, short next to a job.
TRANSIENT_RETRY_S = 30.0


def round_lease() -> timedelta:
    """How long a round may hold its job before another worker may take it over
    (``ROUND_LEASE_S``: past the task's hard time limit its worker is certainly gone)."""
    return timedelta(seconds=settings.ROUND_LEASE_S)


class LeaseLost(RuntimeError):
    """Raised by a round's work when another worker took its job over (its lease ran out): the
    round drops what it did and reports STALE."""


def _never(_exc: BaseException) -> bool:
    return False


def error_text(reason: Any) -> dict[str, Any]:
    """The row's changes that record why a job failed: its ``error`` text."""
    return {"error": str(reason)[:_MAX_ERROR]}


def internal_error(exc: BaseException) -> str:
    """What a job that failed on an unexpected error says about it (the log has the trace)."""
    return f"internal error: {type(exc).__name__}: {exc}"


# Not frozen: a test may swap one part (e.g. enqueue_round) with monkeypatch.
@dataclass(eq=False)
class LeasedJobKind:
    """What differs between kinds of round-based job.

    A round (:meth:`advance`) runs ``work(pk, worker, **options)`` (engine calls, outside any
    transaction), then ``commit(job, done)`` with what it returned, in the round's transaction
    (:meth:`commit_round`); without ``commit``, ``work`` returns the round's outcome itself.
    ``counts_rounds``: each committed round moves ``round_index`` on (a one-round job whose
    number names a computation keeps it). ``enqueue_round(pk, index)``
    queues a round (``enqueue_round(pk)`` when ``numbered`` is False: the row says what is
    left); ``state_error`` is what a refused cancel or a busy foreground run raises; ``label``
    names one job in messages ("rule job"); ``sweep_name`` is the name the shared recovery
    sweep reports; ``lease`` is how long a round holds its job.

    The guard's ladder (:meth:`advance`): ``transient(exc)`` says an error is worth
    running the round again; ``permanent`` are the errors whose message is the job's reason to
    fail (``reason(exc)`` reads it); ``interrupted``, when set, is the reason a round cut short
    fails its job with (a job that cannot resume), instead of being run again. ``failure``
    turns a reason into the row's changes; ``internal_reason`` words an unexpected error;
    ``cost`` (optional) reads a job's spend when it fails; ``on_failed`` (optional) tidies up
    after a failure (an import drops its file), ``on_cancelled`` (optional) after a cancel, in
    its transaction (a breaker run stops its chains).

    The claim: ``running`` is the status a claimed job takes; ``claim_changes(worker)`` are
    written with the claim. ``also_sweep`` (optional) runs with each recovery sweep.
    """

    label: str
    sweep_name: str
    model: type[Model]
    work: Callable[..., Any]
    enqueue_round: Callable[..., None]
    state_error: type[Exception]
    commit: Callable[[Any, Any], Status] | None = None
    numbered: bool = True
    counts_rounds: bool = True
    lease: Callable[[], timedelta] = round_lease
    running: str = "running"
    claim_changes: Callable[[str], dict[str, Any]] | None = None
    transient: Callable[[BaseException], bool] = _never
    permanent: tuple[type[BaseException], ...] = ()
    reason: Callable[[BaseException], Any] = str
    interrupted: Any = None
    failure: Callable[[Any], dict[str, Any]] = error_text
    internal_reason: Callable[[BaseException], Any] = internal_error
    cost: Callable[[int], Any] | None = None
    on_failed: Callable[[int], None] | None = None
    on_cancelled: Callable[[Any], None] | None = None
    also_sweep: Callable[[], None] | None = None

    @property
    def name(self) -> str:
        """The name the recovery sweep reports this kind under (``rounds.register``)."""
        return self.sweep_name

    @property
    def _objects(self) -> Any:
        return self.model._default_manager

    def _rows(self, pk: int) -> Any:
        return self._objects.filter(pk=pk)

    # --- The claim -------------------------------------------------------------------------

    def claim(self, pk: int, round_index: int | None, worker: str) -> bool:
        """Claim round ``round_index`` of an active job for ``worker`` (status becomes
        ``running``); a kind whose rounds carry no number passes None."""
        model: Any = self.model
        rows = self._objects.filter(pk=pk, status__in=model.ACTIVE)
        if self.numbered:
            rows = rows.filter(round_index=round_index)
        changes = self.claim_changes(worker) if self.claim_changes else {}
        return claim(rows, worker, self.lease(), status=self.running, **changes)

    def unclaimed_outcome(self, pk: int, round_index: int | None) -> Outcome:
        """Why a round could not claim its job: it moved on or ended before this (duplicate)
        message (STALE), someone holds it (BUSY), or it was paused, cancelled or failed
        (STOPPED). A job whose rounds carry no number cannot tell a duplicate message from a
        late one, so every ended job is STALE to it."""
        job = self._rows(pk).first()
        if job is None or (self.numbered and job.round_index != round_index):
            return Outcome(Status.STALE)
        if job.status in job.ACTIVE:
            if job.claimed_by:
                return Outcome(Status.BUSY, retry_in=retry_after_lease(job.lease_expires_at))
            return Outcome(Status.STOPPED)
        if not self.numbered or job.status in job.SUCCEEDED:
            return Outcome(Status.STALE)
        return Outcome(Status.STOPPED)

    def release(self, pk: int, worker: str) -> None:
        """Give up ``worker``'s claim; the job stays as it is (the round runs again later)."""
        release(self._rows(pk), worker)

    def fail(self, pk: int, worker: str, reason: Any) -> bool:
        """End the job as failed with ``reason``, releasing ``worker``'s lease (and recording
        its cost). False when the worker no longer held the job (nothing written)."""
        changes: dict[str, Any] = {
            "status": self.model.Status.FAILED,  # type: ignore[attr-defined]
            "finished_at": timezone.now(),
            **self.failure(reason),
        }
        if self.cost is not None:
            changes["cost"] = self.cost(pk)
        if not release(self._rows(pk), worker, **changes):
            return False
        if self.on_failed is not None:
            self.on_failed(pk)
        return True

    def _failed(self, pk: int, worker: str, reason: Any) -> Outcome:
        return Outcome(Status.STOPPED if self.fail(pk, worker, reason) else Status.STALE)

    # --- The guarded round -----------------------------------------------------------------

    def advance(
        self,
        pk: int,
        round_index: int | None = None,
        *,
        worker: str,
        interrupts: tuple[type[BaseException], ...] = (),
        **options: Any,
    ) -> Outcome:
        """Round ``round_index`` of job ``pk`` (None where rounds carry no number): claim the
        job, run ``work`` (``options`` go to it), then ``commit`` what it returned; the caller
        queues the successor the outcome asks for (the task) or runs it (the foreground loop).

        Every error of ``work`` goes down one ladder: an interrupt (the soft time limit)
        releases the claim and propagates, so the round runs again (or fails the job, for a
        kind with ``interrupted``); a lost lease is STALE; a transient error releases and asks
        for the same round after :data:`TRANSIENT_RETRY_S`; a permanent one fails the job with
        its message; a lost database propagates untouched (the job is whole in it, and the task
        runs the round again once it is back: :func:`rounds.retry_when_database_is_back`);
        anything else fails the job as an internal error, with the trace in the log.
        """
        if not self.claim(pk, round_index, worker):
            return self.unclaimed_outcome(pk, round_index)
        try:
            done = self.work(pk, worker, **options)
        except interrupts:
            if self.interrupted is not None:
                return self._failed(pk, worker, self.interrupted)
            self.release(pk, worker)
            raise
        except LeaseLost:
            return Outcome(Status.STALE)
        except Exception as exc:
            if database_lost(exc):
                raise
            return self._after_error(pk, worker, exc)
        if self.commit is None:
            return done
        return self.commit_round(pk, round_index, worker, done)

    def commit_round(self, pk: int, round_index: int | None, worker: str, done: Any) -> Outcome:
        """The round's commit, in one transaction: lock the job, check that ``worker`` still
        holds this round (else STALE: its lease ran out and another worker took over), have
        ``commit(job, done)`` write what the round did and say what follows, then count the
        round, release the claim and save the job."""
        assert self.commit is not None
        with transaction.atomic():
            job = self._objects.select_for_update().get(pk=pk)
            if job.claimed_by != worker or (self.numbered and job.round_index != round_index):
                return Outcome(Status.STALE)
            status = self.commit(job, done)
            if self.numbered and self.counts_rounds:
                job.round_index += 1
            job.claimed_by, job.lease_expires_at = "", None
            job.save()
        return Outcome(status)

    def after_round(self, job: Any, *, more: bool) -> Status:
        """What follows a committed round, for a commit to return: a job paused or cancelled
        during the round stops at this boundary; one with ``more`` to do goes on; else it
        finished (its status and end time are set)."""
        if job.status != self.running:
            return Status.STOPPED
        if more:
            return Status.MORE
        job.status, job.finished_at = job.SUCCEEDED[0], timezone.now()
        return Status.DONE

    def _after_error(self, pk: int, worker: str, exc: Exception) -> Outcome:
        """The ladder's rungs below the lost database: transient, permanent, internal."""
        if self.transient(exc):
            self.release(pk, worker)
            logger.warning("%s %s: transient error, retrying: %s", self.label, pk, exc)
            return Outcome(Status.RETRY, retry_in=TRANSIENT_RETRY_S)
        if isinstance(exc, self.permanent):
            return self._failed(pk, worker, self.reason(exc))
        logger.exception("%s %s failed", self.label, pk)
        return self._failed(pk, worker, self.internal_reason(exc))

    # --- Controls, recovery, the foreground ------------------------------------------------

    def _refused(self, job: Any, action: str) -> Exception:
        state = job.get_status_display().lower()
        return self.state_error(f"a {state} {self.label} cannot be {action}")

    def cancel(self, job: Any) -> Any:
        """End the job for good (whatever did not end yet: paused and waiting jobs too); the
        round in flight still records what it paid for."""
        now = timezone.now()
        with transaction.atomic():
            updated = (
                self._objects.filter(pk=job.pk)
                .exclude(status__in=job.ENDED)
                .update(status=job.Status.CANCELLED, finished_at=now, updated_at=now)
            )
            if not updated:
                raise self._refused(job, "cancelled")
            if self.on_cancelled is not None:
                self.on_cancelled(job)
        job.refresh_from_db()
        return job

    def pause(self, job: Any) -> Any:
        """Stop after the round in flight (a kind whose statuses have PAUSED); :meth:`resume`
        carries on."""
        updated = self._objects.filter(pk=job.pk, status__in=job.ACTIVE).update(
            status=job.Status.PAUSED, updated_at=timezone.now()
        )
        if not updated:
            raise self._refused(job, "paused")
        job.refresh_from_db()
        return job

    def resume(self, job: Any) -> Any:
        """Queue the round a paused job stopped before."""
        with transaction.atomic():
            locked = self._objects.select_for_update().get(pk=job.pk)
            if locked.status != locked.Status.PAUSED:
                raise self._refused(locked, "resumed")
            locked.status = self.running
            locked.save(update_fields=["status", "updated_at"])
            self.enqueue_round(job.pk, locked.round_index)
        job.refresh_from_db()
        return job

    def recover(self, dead_worker_prefix: str | None = None) -> list[int]:
        """Queue the current round of this kind's jobs nobody works on (the sweep's part)."""
        model: Any = self.model
        recovered = requeue_stalled(
            self._objects.filter(status__in=model.ACTIVE).order_by("pk"),
            self.lease(),
            self.enqueue_round,
            dead_worker_prefix=dead_worker_prefix,
            fields=("pk", "round_index") if self.numbered else ("pk",),
        )
        if self.also_sweep is not None:
            self.also_sweep()
        return recovered

    def run_in_foreground(self, pk: int, *, worker: str | None = None, **options: Any) -> Any:
        """Every round of a job in this process until it finishes or stops (``options`` go to
        each round)."""
        worker = worker or foreground_worker()

        def advance() -> Outcome:
            if not self.numbered:
                return self.advance(pk, worker=worker, **options)
            index = self._objects.values_list("round_index", flat=True).get(pk=pk)
            return self.advance(pk, index, worker=worker, **options)

        try:
            run_in_foreground(advance)
        except Busy:
            message = f"{self.label} {pk} is being run by a worker; try again later"
            raise self.state_error(message) from None
        return self._objects.get(pk=pk)
