"""Headless Chromium for the browser tests, and a guard that ends a test stuck on it.

Several Playwright calls wait without a time limit: ``evaluate``, ``close``, starting the driver.
Twice the PostgreSQL suite in CI sat in one of them until CI's own limit ended the whole run,
with nothing in the log to say where. The guard gives every browser test a deadline far above
what one needs (each takes seconds). When it passes, the guard writes where the test and the
live server's threads wait, then kills the Playwright driver and its Chromium, which makes the
waiting call raise. The test then fails and is run once more (``tests/conftest.py`` marks
browser tests ``flaky`` with that condition); any other failure is not run again.
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
import threading
import traceback
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import psutil

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
DEADLINE_SECONDS = 240.0


def require_chromium() -> None:
    """Skip the calling test where Debian's Chromium is not installed."""
    import pytest

    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed")


def launch(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)


REPO_ROOT = Path(__file__).resolve().parent.parent

_hung_tests: set[str] = set()


def hung(nodeid: str) -> bool:
    """Whether the guard ended this test (the rerun condition)."""
    return nodeid in _hung_tests


class HangGuard:
    """Kills the Playwright driver of this process if a test still runs at the deadline."""

    def __init__(self, nodeid: str, report_fd: int, deadline: float):
        self.nodeid = nodeid
        self.report_fd = report_fd
        self.deadline = deadline
        self.fired = False
        self._timer = threading.Timer(deadline, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> HangGuard:
        self._timer.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._timer.cancel()
        self._timer.join()  # a report being written is finished before the test goes on

    def _fire(self) -> None:
        self.fired = True
        _hung_tests.add(self.nodeid)
        # Where everything waits is read before the kill, which sets the test body moving. The
        # kill must happen whatever the report meets on its way.
        try:
            report = hang_report(self.nodeid, self.deadline)
        except Exception as error:
            report = f"\nBROWSER TEST HUNG: {self.nodeid} (no report: {error!r})\n"
        killed = kill_playwright_drivers()
        report += f"  killed the Playwright driver and its browsers (pids {killed}); the test\n"
        report += "  fails and runs once more.\n"
        os.write(self.report_fd, report.encode())


def kill_playwright_drivers() -> list[int]:
    """Kill every Playwright driver this process started, with its browsers; their pids."""
    killed = []
    for child in psutil.Process().children():
        try:
            if "run-driver" not in child.cmdline():
                continue
            tree = [*child.children(recursive=True), child]
        except psutil.NoSuchProcess:
            continue
        for process in tree:
            try:
                process.kill()
                killed.append(process.pid)
            except psutil.NoSuchProcess:
                pass
    return killed


def hang_report(nodeid: str, deadline: float) -> str:
    lines = [f"\nBROWSER TEST HUNG: {nodeid} still ran after {deadline:.0f} s."]
    # The test body waits in a greenlet that Playwright's event loop switched away from: its
    # frames are not in the thread's stack, only in the suspended greenlet.
    for frame in _suspended_greenlet_frames():
        lines.append(f"  waiting greenlet: {_where(frame)}")
    current = threading.get_ident()
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        if ident != current:
            lines.append(f"  thread {names.get(ident, ident)}: {_where(frame)}")
    return "\n".join(lines) + "\n"


def _suspended_greenlet_frames() -> list[FrameType]:
    try:
        from greenlet import greenlet
    except ImportError:
        return []
    # type(), not isinstance(): isinstance() reads __class__, which evaluates lazy objects
    # (Django's SimpleLazyObject) found among everything the collector tracks.
    greenlets = [obj for obj in gc.get_objects() if issubclass(type(obj), greenlet)]
    return [g.gr_frame for g in greenlets if g.gr_frame is not None]


def _where(frame: FrameType) -> str:
    """The innermost frame, and the innermost one in this repository's own code."""
    stack = traceback.extract_stack(frame)
    innermost = stack[-1]
    ours = [entry for entry in stack if _is_ours(entry.filename)]
    text = _short(innermost)
    if ours and ours[-1] is not innermost:
        text += f" (from {_short(ours[-1])})"
    return text


def _is_ours(filename: str) -> bool:
    path = Path(filename)
    return path.is_relative_to(REPO_ROOT) and ".venv" not in path.parts


def _short(entry: traceback.FrameSummary) -> str:
    path = Path(entry.filename)
    shown = path.relative_to(REPO_ROOT) if _is_ours(entry.filename) else path.name
    return f"{shown}:{entry.lineno} {entry.name}: {(entry.line or '').strip()[:100]}"
