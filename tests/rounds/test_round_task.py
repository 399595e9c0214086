"""The body every round task shares (rounds.run_round): which round comes next, and when."""

from __future__ import annotations

import os

import pytest
from celery.exceptions import Retry, SoftTimeLimitExceeded
from django.db import OperationalError, connection

import rounds
from difficulty import services as difficulty_services
from difficulty import tasks as difficulty_tasks
from imports import services as import_services
from imports import tasks as import_tasks
from lexical import tasks as lexical_tasks
from lexical.evaluation import services as evaluation_services
from lexical.mining import services as mining_services
from lexical.rules import services as rule_services
from rounds import Outcome, Status
from search import tasks as search_tasks
from search.breaker import data_quality
from search.breaker import services as breaker_services
from search.breaker.transfer import services as transfer_services
from search.runs import services as run_services
from tests.rounds.recording_task import RecordingTask


class Job:
    """A job whose rounds answer ``outcome`` (or raise it) and that records what was queued."""

    def __init__(self, outcome: Outcome | BaseException) -> None:
        self.outcome = outcome
        self.advanced: list[tuple[int, int, str]] = []
        self.queued: list[tuple[int, int, float | None]] = []

    def advance(self, job_id: int, round_index: int, *, worker: str, interrupts) -> Outcome:
        assert interrupts == (SoftTimeLimitExceeded,)
        self.advanced.append((job_id, round_index, worker))
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome

    def enqueue(self, job_id: int, round_index: int, *, countdown: float | None = None) -> None:
        self.queued.append((job_id, round_index, countdown))


def run(job: Job, task: RecordingTask | None = None) -> None:
    rounds.run_round(task or RecordingTask(), job.advance, job.enqueue, 7, 3)


def test_a_round_with_more_to_do_queues_the_next_round_at_once():
    job = Job(Outcome(Status.MORE))
    run(job)
    assert job.queued == [(7, 4, None)]


@pytest.mark.parametrize("status", [Status.BUSY, Status.RETRY])
def test_a_lease_or_a_transient_error_queues_the_same_round_after_the_wait(status):
    job = Job(Outcome(status, retry_in=30.0))
    run(job)
    assert job.queued == [(7, 3, 30.0)]


@pytest.mark.parametrize("status", [Status.WAITING, Status.DONE, Status.STOPPED, Status.STALE])
def test_a_job_that_finished_stopped_or_waits_queues_nothing(status):
    job = Job(Outcome(status))
    run(job)
    assert job.queued == []


def test_a_round_cut_short_by_the_time_limit_is_queued_again_as_it_was():
    job = Job(SoftTimeLimitExceeded())
    run(job)
    assert job.queued == [(7, 3, None)]


def test_another_error_propagates_and_queues_nothing():
    job = Job(ValueError("a bug"))
    with pytest.raises(ValueError, match="a bug"):
        run(job)
    assert job.queued == []


@pytest.mark.django_db(transaction=True)
def test_a_lost_database_is_retried_by_celery_on_a_server_database():
    connection.ensure_connection()
    connection.close()  # as after the server cut it
    job, task = Job(OperationalError("server closed the connection unexpectedly")), RecordingTask()
    if connection.vendor == "sqlite":  # no server to lose: the error propagates
        with pytest.raises(OperationalError):
            run(job, task)
        assert task.retries == []
        return
    with pytest.raises(Retry):
        run(job, task)
    assert task.retries == [{"countdown": rounds.outage.DATABASE_RETRY_S, "max_retries": None}]
    assert job.queued == []


def test_the_worker_name_starts_with_the_node_name_then_the_process_the_task_and_its_retry():
    job = Job(Outcome(Status.DONE))
    run(job, RecordingTask("celery@box"))
    run(job, RecordingTask(None))
    run(job, RecordingTask("celery@box", retries=2))
    assert [worker for *_, worker in job.advanced] == [
        f"celery@box:{os.getpid()}:task-1#0",
        f"worker:{os.getpid()}:task-1#0",
        f"celery@box:{os.getpid()}:task-1#2",
    ]


# Each task with the service whose rounds it runs and the function that queues them.
TASKS = [
    (search_tasks.advance_search_run, run_services, "advance_run", "enqueue_round"),
    (search_tasks.advance_breaker_run, breaker_services, "advance_run", "enqueue_round"),
    (
        search_tasks.advance_breaker_transfer,
        transfer_services,
        "advance_transfer",
        "enqueue_round",
    ),
    (
        search_tasks.compute_breaker_statistics,
        data_quality,
        "compute_statistics",
        "enqueue_statistics",
    ),
    (lexical_tasks.advance_mining, mining_services, "advance_mining", "enqueue_round"),
    (lexical_tasks.advance_rule_job, rule_services, "advance_job", "enqueue_round"),
    (
        lexical_tasks.advance_lexical_evaluation,
        evaluation_services,
        "advance_evaluation",
        "enqueue_round",
    ),
]


@pytest.mark.parametrize(
    ("task", "service", "advance", "enqueue"), TASKS, ids=[t[0].name for t in TASKS]
)
def test_each_round_task_runs_its_services_round_and_queues_its_successor(
    monkeypatch, task, service, advance, enqueue
):
    job = Job(Outcome(Status.RETRY, retry_in=5.0))
    monkeypatch.setattr(service, advance, job.advance)
    monkeypatch.setattr(service, enqueue, job.enqueue)
    task.run(11, 2)
    assert [(job_id, index) for job_id, index, _ in job.advanced] == [(11, 2)]
    assert job.queued == [(11, 2, 5.0)]


# --- Jobs whose rounds carry no number (rounds.run_job_round) -----------------------------


class UnnumberedJob(Job):
    """A :class:`Job` whose rounds carry no number: recorded as round 0."""

    def advance(self, job_id: int, *, worker: str, interrupts) -> Outcome:  # type: ignore[override]
        return super().advance(job_id, 0, worker=worker, interrupts=interrupts)

    def enqueue(self, job_id: int, *, countdown: float | None = None) -> None:  # type: ignore[override]
        super().enqueue(job_id, 0, countdown=countdown)


@pytest.mark.parametrize(
    ("outcome", "queued"),
    [
        (Outcome(Status.MORE), [(7, 0, None)]),
        (Outcome(Status.BUSY, retry_in=12.0), [(7, 0, 12.0)]),
        (Outcome(Status.DONE), []),
        (SoftTimeLimitExceeded(), [(7, 0, None)]),
    ],
)
def test_a_job_without_round_numbers_queues_its_next_round_by_the_same_rules(outcome, queued):
    job = UnnumberedJob(outcome)
    rounds.run_job_round(RecordingTask(), job.advance, job.enqueue, 7)
    assert job.queued == queued


JOB_TASKS = [
    (
        difficulty_tasks.advance_difficulty_evaluation,
        difficulty_services,
        "advance_difficulty_evaluation",
        "enqueue_evaluation_round",
    ),
    (import_tasks.run_import, import_services, "run_import_job", "enqueue_import"),
]


@pytest.mark.parametrize(
    ("task", "service", "advance", "enqueue"), JOB_TASKS, ids=[t[0].name for t in JOB_TASKS]
)
def test_dec_and_import_tasks_run_their_round_and_wait_out_a_lost_database(
    monkeypatch, task, service, advance, enqueue
):
    job = UnnumberedJob(Outcome(Status.BUSY, retry_in=5.0))
    monkeypatch.setattr(service, advance, job.advance)
    monkeypatch.setattr(service, enqueue, job.enqueue)
    task.run(11)
    assert job.queued == [(11, 0, 5.0)]

    lost: list[BaseException] = []
    monkeypatch.setattr(rounds.tasks, "retry_when_database_is_back", lambda _t, e: lost.append(e))
    job.outcome = OperationalError("server closed the connection unexpectedly")
    with pytest.raises(OperationalError):
        task.run(11)
    assert lost == [job.outcome]  # asked whether to retry (a server database says yes)
