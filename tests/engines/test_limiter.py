"""The per-engine concurrency limit holds across threads and separate processes."""

from __future__ import annotations

import multiprocessing
import os
import threading

import httpx
import pytest
from django.db import connection

from engines.limiter import FileSlots, PostgresSlots, SlotTimeout, limiter
from tests import databases

pytestmark = pytest.mark.django_db


def _hammer(slots, url: str, engine_id: int, limit: int, calls: int) -> None:
    for _ in range(calls):
        with slots.slot(engine_id, limit, wait_s=30):
            httpx.post(url, json={"model": "m", "messages": [{"role": "user", "content": "x"}]})


def _child(slots, url, engine_id, limit, calls):
    # A fresh backend object in the child: nothing is shared with the parent but the kernel's
    # file locks or the database's advisory locks.
    fresh = (
        FileSlots(slots.directory)
        if isinstance(slots, FileSlots)
        else PostgresSlots(slots.conninfo)
    )
    _hammer(fresh, url, engine_id, limit, calls)


def test_limit_holds_across_processes_and_threads(fake_openai):
    fake_openai.latency = 0.1
    slots = limiter()
    url = fake_openai.base_url + "/chat/completions"
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_child, args=(slots, url, 4242, 2, 3)) for _ in range(3)]
    threads = [threading.Thread(target=_hammer, args=(slots, url, 4242, 2, 3)) for _ in range(2)]
    for worker in processes + threads:
        worker.start()
    for thread in threads:
        thread.join(30)
    for process in processes:
        process.join(30)
        assert process.exitcode == 0
    slots.close_all()

    assert len(fake_openai.requests) == 15
    assert fake_openai.max_in_flight == 2


def test_backend_follows_the_database():
    expected = PostgresSlots if connection.vendor == "postgresql" else FileSlots
    assert isinstance(limiter(), expected)


def test_waiting_for_a_slot_times_out_transiently():
    slots = limiter()
    with (
        slots.slot(777, 1, wait_s=5),
        pytest.raises(SlotTimeout) as info,
        slots.slot(777, 1, wait_s=0.1),
    ):
        pass
    assert not info.value.permanent
    with slots.slot(777, 1, wait_s=1):  # released again
        pass
    slots.close_all()


def test_file_slots_are_released_when_a_process_dies(tmp_path):
    slots = FileSlots(tmp_path)
    context = multiprocessing.get_context("fork")
    ready = context.Event()

    def hold_and_die():
        with slots.slot(1, 1, wait_s=1):
            ready.set()
            os._exit(0)  # no cleanup, as in a killed worker

    process = context.Process(target=hold_and_die)
    process.start()
    assert ready.wait(10)
    process.join(10)

    with slots.slot(1, 1, wait_s=2):
        pass


postgres_only = databases.postgres_only("advisory-lock slots need PostgreSQL")


def _batch(slots: PostgresSlots, width: int = 3) -> None:
    """One batch as the call path runs it: ``width`` request threads, all holding a slot at
    once (so the batch needs exactly ``width`` connections)."""
    together = threading.Barrier(width, timeout=10)

    def hold() -> None:
        with slots.slot(31, width, wait_s=5):
            together.wait()

    threads = [threading.Thread(target=hold) for _ in range(width)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)


@postgres_only
def test_consecutive_batches_reuse_the_connection():
    slots = PostgresSlots(limiter().conninfo)
    _batch(slots)
    _batch(slots)
    assert slots.opened() == 3
    slots.close_all()
    _batch(slots)
    assert slots.opened() == 6
    slots.close_all()


@postgres_only
def test_a_forked_child_opens_its_own_connection():
    slots = PostgresSlots(limiter().conninfo)
    _batch(slots)
    pid = os.fork()
    if pid == 0:  # the child: any failure is its exit status
        try:
            fresh = slots.opened() == 0
            _batch(slots)
            os._exit(0 if fresh and slots.opened() == 3 else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    _batch(slots)  # the parent's sessions survived the child and serve this batch
    assert slots.opened() == 3
    slots.close_all()


@postgres_only
def test_idle_connections_are_closed_after_the_idle_timeout():
    now = [100.0]
    slots = PostgresSlots(limiter().conninfo, idle_s=5, clock=lambda: now[0])
    _batch(slots)
    first = slots._pool().idle[0]
    now[0] += 4
    _batch(slots)
    assert slots.opened() == 3 and not first.closed
    now[0] += 6
    _batch(slots)
    assert slots.opened() == 6 and first.closed
    slots.close_all()
