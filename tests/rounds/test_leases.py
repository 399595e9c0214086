"""Leases: who may claim a row that someone else claimed, and when.

A retry that a task asked for (after a lost database) takes over its earlier run's claim at
once, on whichever process or node it landed; the same message delivered again after its
worker died does not, and neither does another task."""

from __future__ import annotations

from datetime import timedelta

import pytest

import rounds
from lexical.models import MiningJob
from tests.lexical.factories import MiningJobFactory

pytestmark = pytest.mark.django_db

LEASE = timedelta(minutes=6)


def held_by(worker: str) -> MiningJob:
    job = MiningJobFactory(status=MiningJob.Status.QUEUED)
    assert rounds.claim(MiningJob.objects.filter(pk=job.pk), worker, LEASE)
    return job


def claims(job: MiningJob, worker: str) -> bool:
    return rounds.claim(MiningJob.objects.filter(pk=job.pk), worker, LEASE)


@pytest.mark.parametrize(
    ("holder", "claimant", "taken_over"),
    [
        ("celery@a:11:t-1#0", "celery@a:11:t-1#0", True),  # the same run claiming again
        ("celery@a:11:t-1#0", "celery@a:12:t-1#1", True),  # its retry, in another process
        ("celery@a:11:t-1#0", "celery@b:40:t-1#3", True),  # a later retry, on another node
        ("celery@a:11:t-1#2", "celery@a:12:t-1#5", True),  # retries in between never claimed
        ("celery@a:11:t-1#0", "celery@a:12:t-1#0", False),  # redelivered: its worker died
        ("celery@a:11:t-1#1", "celery@a:12:t-1#1", False),
        ("celery@a:11:t-1#0", "celery@a:12:t-2#1", False),  # another task's retry
        ("celery@a:11:t-1#0", "foreground@a:12", False),
        ("foreground@a:11", "celery@a:12:t-1#1", False),
    ],
)
def test_who_may_take_over_a_live_claim(holder, claimant, taken_over):
    job = held_by(holder)

    assert claims(job, claimant) is taken_over
    job.refresh_from_db()
    assert job.claimed_by == (claimant if taken_over else holder)


def test_a_task_id_that_ends_another_is_not_the_same_task():
    job = held_by("celery@a:11:xt-1#0")
    assert not claims(job, "celery@a:12:t-1#1")


def test_anyone_claims_a_lapsed_lease():
    job = held_by("celery@a:11:t-1#0")
    MiningJob.objects.filter(pk=job.pk).update(lease_expires_at=None)
    assert claims(job, "celery@b:7:t-9#0")


def test_only_a_retry_has_an_earlier_run():
    assert rounds.held_by_an_earlier_run("celery@a:11:t-1#0") is None
    assert rounds.held_by_an_earlier_run("foreground@a:11") is None
    assert rounds.held_by_an_earlier_run("celery@a:11:t-1#x") is None
    assert rounds.held_by_an_earlier_run("celery@a:11:t-1#1") is not None
