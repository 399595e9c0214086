"""Shared fixtures: personas (admin, annotator, outsider) and a real Celery worker process."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.db import DatabaseCache
from django.core.servers.basehttp import WSGIServer
from django.db import connection, connections
from django.db.backends.signals import connection_created
from django.dispatch import receiver
from django.test.testcases import LiveServerThread

import rounds.queue
from engines import limiter
from tests import browser as browser_support
from tests import databases
from tests.factories import UserFactory

REPO_ROOT = Path(__file__).resolve().parent.parent
# The platform's own setting (HARDSET_SHARED_DATA, else ../shared/data beside the checkout):
# the tests read the real data where the demo does.
SHARED_DATA = Path(settings.SHARED_DATA_DIR)


# A statement that waits on a lock forever would hold the whole suite to CI's time limit with
# nothing in the log to say where. On PostgreSQL every connection of the test process (the test
# body, the live server's threads, the teardown's flush) gives up after two minutes instead, and
# the error names the statement that waited.
@receiver(connection_created, dispatch_uid="tests.bounded_lock_waits")
def _bounded_lock_waits(sender, connection, **kwargs) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '120s'")


class SerialLiveServer(WSGIServer):
    """The live server, answering one request at a time in its own thread.

    On in-memory SQLite the live server shares the test's one connection. Django's threaded
    server used it from a thread per request at once, which crashed the interpreter
    (a segmentation fault inside sqlite3 while Chromium loaded a page's parts in parallel).
    A server that is not threaded also closes each connection after its response, so a
    browser's kept-alive connection cannot hold it.

    Chromium also opens connections ahead of need and may send nothing on them; a server that
    answers one connection at a time sat on such a connection until Chromium gave it up (about
    19 s, twice in a journey). A connection that sends no request within a second is dropped
    instead: Chromium opens another when it has something to ask."""

    IDLE_CONNECTION_S = 1.0

    def __init__(self, server_address, handler_class, *args, connections_override=None, **kw):
        # LiveServerThread.run() has already put the shared connections in this thread.
        handler = type("IdleTimeoutHandler", (handler_class,), {"timeout": self.IDLE_CONNECTION_S})
        super().__init__(server_address, handler, *args, **kw)

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], TimeoutError):
            return  # an idle connection, dropped on purpose
        super().handle_error(request, client_address)


# On SQLite the test database is in memory (Django's default, also when DATABASE_URL names a file).
if connection.vendor == "sqlite":
    LiveServerThread.server_class = SerialLiveServer


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        module_path = Path(item.path).relative_to(REPO_ROOT).as_posix()
        if databases.runs_on_postgresql(item, module_path):
            item.add_marker(databases.MARKER)
        # A browser test that the hang guard ended runs once more; any other failure does not.
        if item.get_closest_marker("browser"):
            condition = functools.partial(browser_support.hung, item.nodeid)
            item.add_marker(pytest.mark.flaky(reruns=1, condition=condition))


@pytest.fixture
def browser(request, monkeypatch):
    """Headless Chromium (Debian's), with a deadline on the whole test (tests/browser.py)."""
    browser_support.require_chromium()
    from _pytest.faulthandler import fault_handler_stderr_fd_key
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls of the test body
    # happen strictly before or after the browser steps, never concurrently.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    # The guard reports on the stderr that pytest's faulthandler keeps uncaptured.
    report_fd = request.config.stash.get(fault_handler_stderr_fd_key, 2)
    guard = browser_support.HangGuard(
        request.node.nodeid, report_fd, deadline=browser_support.DEADLINE_SECONDS
    )
    with guard, sync_playwright() as playwright:
        chromium = browser_support.launch(playwright)
        yield chromium
        if not guard.fired:  # else the driver is gone and close() could only fail
            chromium.close()
        # While Playwright's loop runs, Django hands this thread a separate connection (asgiref
        # locals follow the event loop); close it, or PostgreSQL cannot drop the test database.
        connections.close_all()


@pytest.fixture(autouse=True)
def _fresh_throttles(request, django_db_blocker):
    """Throttles (API, sign-up) count in the default cache and the derived cache outlives a
    test: each test starts with both empty. Without CACHE_URL the default cache is a database
    table: emptied as a test that has the test database starts (no other test can reach it),
    since a transactional test's rows there outlive its flush. Not after the test: a failed
    statement may have broken the test's transaction, whose rollback undoes the rows anyway.
    Login lockouts live in the database and roll back with it."""
    uses_db = (
        request.node.get_closest_marker("django_db") is not None
        or "django_db_setup" in request.fixturenames
    )
    if uses_db:
        request.getfixturevalue("django_db_setup")
        with django_db_blocker.unblock():
            _clear_caches(database=True)
    else:
        _clear_caches(database=False)
    yield
    _clear_caches(database=False)


def _clear_caches(*, database: bool) -> None:
    for alias in settings.CACHES:
        if database or not isinstance(caches[alias], DatabaseCache):
            caches[alias].clear()


@pytest.fixture(autouse=True)
def _limiter_sessions_closed():
    """The engine limiter keeps its PostgreSQL sessions open across batches; none may be left
    idle when the test database is dropped (an open session blocks DROP DATABASE)."""
    yield
    limiter.close_all()


@pytest.fixture
def real_password_hashers(settings):
    """The production hashers, for tests about hashing itself (tests/settings.py uses MD5)."""
    settings.PASSWORD_HASHERS = settings.PRODUCTION_PASSWORD_HASHERS


@pytest.fixture
def admin_user(db):
    return UserFactory(username="admin", is_staff=True, is_superuser=True)


@pytest.fixture
def annotator_user(db):
    return UserFactory(username="annotator")


@pytest.fixture
def outsider_user(db):
    return UserFactory(username="outsider")


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client


@pytest.fixture
def annotator_client(client, annotator_user):
    client.force_login(annotator_user)
    return client


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} is absent (CI has ../shared beside the repo)")
    return SHARED_DATA


def test_database_url() -> str:
    """A DATABASE_URL that points a separate process at the test database."""
    conf = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{conf['NAME']}"
    if connection.vendor == "postgresql":
        user = conf.get("USER") or "postgres"
        host = conf.get("HOST") or "127.0.0.1"
        port = conf.get("PORT") or 5432
        return f"postgres://{user}@{host}:{port}/{conf['NAME']}"
    raise RuntimeError(f"no worker support for {connection.vendor}")


class WorkerProcess:
    """A real `celery worker` subprocess on the test database and the test Redis broker."""

    def __init__(
        self, queues: str, pool: str, extra_env: dict[str, str], hostname: str | None = None
    ):
        self.hostname = hostname or f"test-{uuid.uuid4().hex[:8]}@localhost"
        self.log_path = (
            Path(settings.VAR_DIR) / f"{self.hostname.split('@')[0]}-{uuid.uuid4().hex[:6]}.log"
        )
        env = os.environ | {
            "DATABASE_URL": test_database_url(),
            "WORKER_HEARTBEAT_SECONDS": "1",
            "DEBUG": "true",
        }
        env.update(extra_env)
        command = [
            sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", queues,
            "-n", self.hostname, "--pool", pool, "--concurrency", "1", "--loglevel", "INFO",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT
        )

    def wait_ready(self, timeout: float = 60) -> None:
        from core.models import WorkerHeartbeat

        self.wait_for(
            lambda: WorkerHeartbeat.objects.filter(hostname=self.hostname).exists(), timeout
        )

    def wait_for(self, condition: Callable[[], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"worker exited early:\n{self.log()}")
            if condition():
                return
            time.sleep(0.05)
        raise AssertionError(f"condition not met within {timeout}s; worker log:\n{self.log()}")

    def kill(self) -> None:
        """SIGKILL: the worker gets no chance to clean up, as in a machine crash."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-6000:]


@pytest.fixture
def celery_worker_factory(transactional_db) -> Iterator[Callable[..., WorkerProcess]]:
    """Start real worker processes; the broker must be Redis (`make test` sets it up)."""
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        pytest.fail(
            "worker tests need CELERY_BROKER_URL=redis://...; run them through `make test` "
            f"(got {settings.CELERY_BROKER_URL!r})"
        )
    started: list[WorkerProcess] = []

    def start(
        queues: str = "default,slow", pool: str = "solo", hostname: str | None = None, **extra_env
    ):
        """``hostname`` restarts a worker under a killed one's name (as a supervisor would)."""
        worker = WorkerProcess(queues, pool, extra_env, hostname)
        started.append(worker)
        worker.wait_ready()
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def celery_worker(celery_worker_factory) -> WorkerProcess:
    return celery_worker_factory()


@pytest.fixture
def sent_tasks(monkeypatch) -> list[tuple[str, tuple, dict]]:
    """Messages queued through the round kernel, as (task name, args, options), not sent."""
    sent: list[tuple[str, tuple, dict]] = []

    def record(task_name, args, queue, countdown):
        sent.append((task_name, tuple(args), {"queue": queue, "countdown": countdown}))

    monkeypatch.setattr(rounds.queue, "send_task", record)
    return sent
