"""The hang guard of the browser tests (tests/browser.py): a Playwright call that would wait
forever raises once the deadline passes, the report says where the test waited, and only a test
the guard ended is run again."""

from __future__ import annotations

import gc
import logging
import os

import psutil
import pytest

from tests import browser as browser_support

pytestmark = pytest.mark.browser


@pytest.fixture
def chromium():
    """A browser of this module's own: under the shared ``browser`` fixture, its guard's teardown
    would close a driver that the guard under test has killed."""
    browser_support.require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield browser_support.launch(playwright)
    # The guard's deliberate kill leaves futures that nobody reads. Collected later, asyncio would
    # log each ("Future exception was never retrieved") at the very end of the suite's output,
    # where it reads like a failure.
    asyncio_log = logging.getLogger("asyncio")
    asyncio_log.disabled = True
    try:
        gc.collect()
    finally:
        asyncio_log.disabled = False


def _read_all(fd: int) -> str:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks).decode()


def test_a_call_that_never_returns_raises_at_the_deadline(chromium, monkeypatch):
    from playwright.sync_api import Error

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    page = chromium.new_page()
    read_end, write_end = os.pipe()
    nodeid = "tests/core/test_browser_guard.py::a hung test"
    with (
        browser_support.HangGuard(nodeid, write_end, deadline=2) as guard,
        pytest.raises(Error, match="closed"),
    ):
        page.evaluate("new Promise(() => {})")  # a promise that never settles
    os.close(write_end)
    report = _read_all(read_end)
    os.close(read_end)

    assert guard.fired
    assert browser_support.hung(nodeid)
    assert f"BROWSER TEST HUNG: {nodeid} still ran after 2 s." in report
    # Where the test body waited, from the greenlet that Playwright's loop switched away from.
    assert "waiting greenlet:" in report
    assert "tests/core/test_browser_guard.py" in report
    assert "page.evaluate(" in report
    # No driver or Chromium of this process is left behind.
    assert not _browsers_running()


def _browsers_running() -> list[psutil.Process]:
    """This process's drivers and Chromiums still running: a killed one that has exited but is
    not reaped yet (a zombie), or that goes while we look, is not left behind."""
    running = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() == psutil.STATUS_ZOMBIE:
                continue
            if "run-driver" in " ".join(child.cmdline()) or "chromium" in child.name():
                running.append(child)
        except psutil.NoSuchProcess:  # ZombieProcess is one
            continue
    return running


def test_a_test_that_ends_in_time_is_not_reported_or_rerun(chromium):
    read_end, write_end = os.pipe()
    nodeid = "tests/core/test_browser_guard.py::a quick test"
    with browser_support.HangGuard(nodeid, write_end, deadline=60) as guard:
        page = chromium.new_page()
        page.set_content("<p>quick</p>")
        assert page.inner_text("p") == "quick"
    os.close(write_end)

    assert not guard.fired
    assert not browser_support.hung(nodeid)
    assert _read_all(read_end) == ""
    os.close(read_end)


def test_browser_tests_rerun_only_when_the_guard_ended_them(request):
    marker = request.node.get_closest_marker("flaky")
    assert marker is not None and marker.kwargs["reruns"] == 1
    condition = marker.kwargs["condition"]
    assert condition() is False  # this test did not hang
    browser_support._hung_tests.add(request.node.nodeid)
    try:
        assert condition() is True
    finally:
        browser_support._hung_tests.discard(request.node.nodeid)
