"""The guarded round body every kind of job shares (rounds.LeasedJobKind.advance): its ladder of
interrupt, lost lease, lost database, transient, permanent and unexpected errors, on a real row
(a mining job) with a stand-in round."""

from __future__ import annotations

import pytest
from django.db import OperationalError

import rounds
from lexical.mining.services import MiningStateError, start_mining
from lexical.models import MiningJob
from rounds import Outcome, Status
from tests.lexical.mining_support import tiny_corpus

pytestmark = pytest.mark.django_db


class Transient(Exception):
    pass


class Permanent(Exception):
    pass


def kind(work, **overrides) -> rounds.LeasedJobKind:
    parts = {
        "label": "test job", "sweep_name": "test job", "model": MiningJob, "work": work,
        "enqueue_round": lambda *args, **kwargs: None, "state_error": MiningStateError,
        "transient": lambda exc: isinstance(exc, Transient), "permanent": (Permanent,),
    }  # fmt: skip
    return rounds.LeasedJobKind(**(parts | overrides))


def raising(error: BaseException):
    def work(pk, worker):
        raise error

    return work


@pytest.fixture
def job() -> MiningJob:
    return start_mining(tiny_corpus(), enqueue=False)


def row(job: MiningJob) -> MiningJob:
    return MiningJob.objects.get(pk=job.pk)


def test_a_transient_error_releases_the_job_and_asks_for_the_round_again(job):
    outcome = kind(raising(Transient("rate limited"))).advance(job.pk, 0, worker="w")
    assert outcome == Outcome(Status.RETRY, retry_in=rounds.TRANSIENT_RETRY_S)
    assert (row(job).status, row(job).claimed_by) == ("running", "")


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (Permanent("refused by the engine"), "refused by the engine"),
        (ZeroDivisionError("by zero"), "internal error: ZeroDivisionError: by zero"),
    ],
)
def test_a_permanent_or_unexpected_error_fails_the_job_with_its_reason(job, error, reason):
    assert kind(raising(error)).advance(job.pk, 0, worker="w").status is Status.STOPPED
    assert (row(job).status, row(job).error, row(job).claimed_by) == ("failed", reason, "")
    assert row(job).finished_at is not None


def test_a_lost_database_propagates_and_leaves_the_job_whole(job, monkeypatch):
    monkeypatch.setattr(rounds.jobs, "database_lost", lambda exc: True)
    lost = OperationalError("server closed the connection unexpectedly")
    with pytest.raises(OperationalError):
        kind(raising(lost), permanent=(Permanent, OperationalError)).advance(job.pk, 0, worker="w")
    # Not failed, even as an error the kind would call permanent: the task retries the round.
    assert (row(job).status, row(job).error, row(job).claimed_by) == ("running", "", "w")


def test_an_interrupt_releases_and_propagates_unless_the_kind_cannot_resume(job):
    with pytest.raises(KeyboardInterrupt):
        kind(raising(KeyboardInterrupt())).advance(
            job.pk, 0, worker="w", interrupts=(KeyboardInterrupt,)
        )
    assert (row(job).status, row(job).claimed_by) == ("running", "")

    once = kind(raising(KeyboardInterrupt()), interrupted="took too long")
    outcome = once.advance(job.pk, 0, worker="w", interrupts=(KeyboardInterrupt,))
    assert outcome.status is Status.STOPPED
    assert (row(job).status, row(job).error) == ("failed", "took too long")


def test_a_lost_lease_is_stale_and_a_failure_it_cannot_record_too(job):
    assert kind(raising(rounds.LeaseLost())).advance(job.pk, 0, worker="w").status is Status.STALE

    def taken_over(pk, worker):
        MiningJob.objects.filter(pk=pk).update(claimed_by="another")
        raise Permanent("too late")

    assert kind(taken_over).advance(job.pk, 0, worker="w").status is Status.STALE
    assert (row(job).status, row(job).claimed_by) == ("running", "another")


def test_the_commit_runs_with_the_job_locked_and_counts_the_round(job):
    def commit(locked, done):
        locked.items_done = done
        return Status.MORE

    outcome = kind(lambda pk, worker: 3, commit=commit).advance(job.pk, 0, worker="w")
    assert outcome.status is Status.MORE
    assert (row(job).items_done, row(job).round_index, row(job).claimed_by) == (3, 1, "")
    # A duplicate message of round 0 is stale: the job moved on.
    assert (
        kind(lambda pk, worker: 5, commit=commit).advance(job.pk, 0, worker="w").status == "stale"
    )


def test_cancel_ends_whatever_has_not_ended_and_refuses_the_rest(job):
    jobs = kind(raising(Permanent()))
    assert jobs.cancel(job).status == "cancelled"
    with pytest.raises(MiningStateError, match="a cancelled test job cannot be cancelled"):
        jobs.cancel(job)
