"""The round kernel every long job shares (search runs, DEC evaluations, topic generation, ...).

A long job is a chain of short rounds. Each round claims its row with a lease (:mod:`.leases`),
does its work, commits, and reports an :class:`Outcome`; the task adapter decides the successor
and queues it by name on commit (:func:`enqueue`); commands run the same rounds in the
foreground (:func:`run_in_foreground`); one sweep (:func:`sweep`) finds jobs whose message was
lost, for every kind registered with :func:`register`; a round whose database went away is
run again when it is back (:func:`retry_when_database_is_back`); a round task's body is
:func:`run_round` (:func:`run_job_round` where rounds carry no number). Every kind of job
describes its lifecycle (claim, the guarded round, fail, cancel, recover, foreground) once with
:class:`LeasedJobKind`; :mod:`rounds.jobs` says how to add a kind. The fields every job's row
shares are the abstract models of :mod:`rounds.models` (imported by the apps' models only).

No tables and no imports of the platform's apps: apps import this, never the other way round.
"""

from rounds.foreground import foreground_worker, run_in_foreground
from rounds.jobs import TRANSIENT_RETRY_S, LeasedJobKind, LeaseLost, round_lease
from rounds.leases import (
    claim,
    held_by_an_earlier_run,
    release,
    requeue_stalled,
    retry_after_lease,
)
from rounds.outage import database_lost, retry_when_database_is_back
from rounds.outcome import Busy, Outcome, Status
from rounds.queue import enqueue
from rounds.recovery import JobKind, register, registered, sweep
from rounds.refusal import JobConfigError
from rounds.tasks import run_job_round, run_round, worker_name

__all__ = [
    "TRANSIENT_RETRY_S",
    "Busy",
    "JobConfigError",
    "JobKind",
    "LeaseLost",
    "LeasedJobKind",
    "Outcome",
    "Status",
    "claim",
    "database_lost",
    "enqueue",
    "foreground_worker",
    "held_by_an_earlier_run",
    "register",
    "registered",
    "release",
    "requeue_stalled",
    "retry_after_lease",
    "retry_when_database_is_back",
    "round_lease",
    "run_in_foreground",
    "run_job_round",
    "run_round",
    "sweep",
    "worker_name",
]
