"""The per-engine concurrency limit holds across threads and separate processes."""

from __future__ import annotations

import multiprocessing
import os
import threading

import httpx
import pytest
from django.db import connection

from engines.limiter import FileSlots, PostgresSlots, SlotTimeout, limiter

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
    slots.close_idle()

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
    slots.close_idle()


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
