"""The round kernel without a worker: outcomes, the foreground loop, the sweep registry."""

from __future__ import annotations

import pytest

import rounds
from rounds import recovery


def test_outcomes_say_whether_and_which_round_follows():
    more, retry = rounds.Outcome(rounds.Status.MORE), rounds.Outcome(rounds.Status.RETRY, 3.0)
    done = rounds.Outcome(rounds.Status.DONE)

    assert (more.wants_successor, more.repeats_round) == (True, False)
    assert (retry.wants_successor, retry.repeats_round) == (True, True)
    assert [done.wants_successor for done in (done, rounds.Outcome(rounds.Status.STALE))] == [
        False,
        False,
    ]
    assert rounds.Status.WAITING == "waiting"  # rows and APIs keep their string statuses


def test_the_foreground_loop_runs_rounds_until_the_job_stops_asking():
    script = iter(
        [rounds.Status.MORE, rounds.Status.RETRY, rounds.Status.MORE, rounds.Status.WAITING]
    )
    slept: list[float] = []

    outcome = rounds.run_in_foreground(
        lambda: rounds.Outcome(next(script), retry_in=2.5), sleep=slept.append
    )

    assert outcome.status == rounds.Status.WAITING
    assert slept == [2.5]


def test_the_foreground_loop_refuses_a_job_a_worker_holds():
    with pytest.raises(rounds.Busy, match="try again in 40 s"):
        rounds.run_in_foreground(lambda: rounds.Outcome(rounds.Status.BUSY, retry_in=40.0))


def test_every_job_kind_is_registered_for_the_sweep():
    assert {"search run", "topic tree generation", "DEC evaluation"} <= set(rounds.registered())


def test_one_kind_failing_does_not_stop_the_sweep_of_the_others(monkeypatch, caplog):
    monkeypatch.setattr(recovery, "_KINDS", {})

    def broken(prefix):
        raise RuntimeError("database went away")

    rounds.register(rounds.JobKind("broken", broken))
    rounds.register(rounds.JobKind("fine", lambda prefix: [7] if prefix == "w1:" else [3]))

    assert rounds.sweep() == {"fine": [3]}
    assert rounds.sweep(dead_worker_prefix="w1:") == {"fine": [7]}
    assert "recovery of broken jobs failed" in caplog.text
