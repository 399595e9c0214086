"""A per-engine concurrency limit that holds across threads, worker processes and machines.

``max_concurrency`` slots per engine; a caller holds one slot for the duration of one remote
request (not while it sleeps between retries). Two backends, chosen by the
``ENGINE_LIMITER`` setting (``auto`` by default):

* ``postgres`` (auto on PostgreSQL): session-level advisory locks, one lock id per (engine,
  slot), taken with ``pg_try_advisory_lock`` on a small pool of dedicated autocommit
  connections. Locks are scoped to the database, so every worker on every machine that shares
  the database shares the limit, and a crashed worker's locks vanish with its connection.
  The pool belongs to one process (keyed by ``os.getpid()``: a forked child opens its own and
  never touches its parent's sessions) and outlives a batch, since opening a connection per
  request thread per batch was most of the platform's per-step cost. Idle connections are
  closed at the next acquire once the pool has been idle ``idle_s`` seconds, and by
  :func:`close_all` (end of a web request, at process exit, after each test) so no idle
  session lingers on the database (it would block e.g. dropping a test database).
* ``file`` (auto elsewhere, i.e. the embedded SQLite default): ``flock`` on one file per slot
  under ``ENGINE_LOCK_DIR`` (default ``VAR_DIR/locks``). ``flock`` locks belong to an open file
  description, so threads of one process exclude each other as well as separate processes do,
  and the kernel releases them when a process dies. Holds across every process on one machine,
  which is what the embedded default runs on.

Redis is deliberately not required: the embedded default has none.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

from engines.interfaces import EngineError

__all__ = ["FileSlots", "PostgresSlots", "SlotTimeout", "close_all", "limiter"]

# First key of the two-int advisory lock id: "HS" for Hardset, so our locks never collide with
# another application's advisory locks in the same database.
_PG_NAMESPACE = 0x4853
_SLOTS_PER_ENGINE = 1024
# Longer than the gap between two batches of a run, short enough that a quiet process gives
# its sessions back soon.
IDLE_S = 5.0


class SlotTimeout(EngineError):
    def __init__(self, message: str) -> None:
        super().__init__(message, permanent=False)


def _pause(waited: float) -> None:
    # Short randomized polls: a slot frees within one request latency, and jitter keeps
    # waiting threads from stampeding the same slot.
    time.sleep(random.uniform(0.002, 0.01 if waited < 1 else 0.05))


class FileSlots:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def close_all(self) -> None:
        """Nothing to close: a file lock lives only while its slot is held."""

    def _path(self, engine_id: int, index: int) -> Path:
        return self.directory / f"engine-{engine_id}-slot-{index}.lock"

    @contextlib.contextmanager
    def slot(self, engine_id: int, limit: int, wait_s: float) -> Iterator[int]:
        self.directory.mkdir(parents=True, exist_ok=True)
        start = time.monotonic()
        offset = random.randrange(limit)
        while True:
            for step in range(limit):
                index = (offset + step) % limit
                fd = os.open(self._path(engine_id, index), os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                try:
                    yield index
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    os.close(fd)
                return
            waited = time.monotonic() - start
            if waited > wait_s:
                raise SlotTimeout(
                    f"no free slot of engine {engine_id} (limit {limit}) within {wait_s:.0f}s"
                )
            _pause(waited)


class _Pool:
    """One process's idle connections, and when one was last given back."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: list[Any] = []
        self.last_used = 0.0
        self.opened = 0


class PostgresSlots:
    def __init__(
        self,
        conninfo: dict[str, Any],
        *,
        idle_s: float = IDLE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.conninfo = conninfo
        self.idle_s = idle_s
        self.clock = clock
        # A forked child inherits its parent's sockets: using or even closing them (libpq
        # sends a terminate message) would end the parent's sessions, so each process gets its
        # own pool and leaves the inherited one alone.
        self._pools: dict[int, _Pool] = {}

    def _pool(self) -> _Pool:
        pid = os.getpid()
        pool = self._pools.get(pid)
        if pool is None:
            pool = self._pools.setdefault(pid, _Pool())
        return pool

    def opened(self) -> int:
        """Connections this process has opened so far."""
        return self._pool().opened

    def close_all(self) -> None:
        """Close this process's idle connections (one in use is pooled again when released)."""
        pool = self._pool()
        with pool.lock:
            idle, pool.idle = pool.idle, []
        for conn in idle:
            conn.close()

    def _connection(self) -> Any:
        import psycopg

        pool = self._pool()
        with pool.lock:
            stale = pool.idle if self.clock() - pool.last_used > self.idle_s else []
            if stale:
                pool.idle = []
            conn = pool.idle.pop() if pool.idle else None
            if conn is None:
                pool.opened += 1
        for old in stale:
            old.close()
        if conn is None:
            conn = psycopg.connect(**self.conninfo, autocommit=True)
        return conn

    def _release(self, conn: Any) -> None:
        pool = self._pool()
        with pool.lock:
            pool.idle.append(conn)
            pool.last_used = self.clock()

    def _acquire(self, engine_id: int, limit: int, wait_s: float) -> tuple[Any, int, int]:
        conn = self._connection()
        start = time.monotonic()
        offset = random.randrange(limit)
        try:
            while True:
                for step in range(limit):
                    index = (offset + step) % limit
                    key = engine_id * _SLOTS_PER_ENGINE + index
                    row = conn.execute(
                        "SELECT pg_try_advisory_lock(%s, %s)", (_PG_NAMESPACE, key)
                    ).fetchone()
                    if row[0]:
                        return conn, key, index
                waited = time.monotonic() - start
                if waited > wait_s:
                    self._release(conn)
                    raise SlotTimeout(
                        f"no free slot of engine {engine_id} (limit {limit}) within {wait_s:.0f}s"
                    )
                _pause(waited)
        except SlotTimeout:
            raise
        except BaseException:
            # A connection in an unknown state (e.g. interrupted mid-query) is not reused.
            conn.close()
            raise

    @contextlib.contextmanager
    def slot(self, engine_id: int, limit: int, wait_s: float) -> Iterator[int]:
        conn, key, index = self._acquire(engine_id, limit, wait_s)
        try:
            yield index
        finally:
            try:
                conn.execute("SELECT pg_advisory_unlock(%s, %s)", (_PG_NAMESPACE, key))
            except Exception:
                # Closing the session releases its advisory locks too.
                conn.close()
            else:
                self._release(conn)


_limiters: dict[tuple, FileSlots | PostgresSlots] = {}


def close_all(**_signal_kwargs: Any) -> None:
    """Close every limiter's idle database connections in this process (also a receiver of
    Django's ``request_finished``)."""
    for slots in list(_limiters.values()):
        slots.close_all()


atexit.register(close_all)


def _pg_conninfo() -> dict[str, Any]:
    conf = connection.settings_dict
    info = {
        "dbname": conf["NAME"],
        "user": conf.get("USER") or None,
        "password": conf.get("PASSWORD") or None,
        "host": conf.get("HOST") or None,
        "port": conf.get("PORT") or None,
    }
    return {key: value for key, value in info.items() if value is not None}


def limiter() -> FileSlots | PostgresSlots:
    """The slots backend for the current database (one instance per process and database)."""
    choice = getattr(settings, "ENGINE_LIMITER", "auto")
    if choice == "auto":
        choice = "postgres" if connection.vendor == "postgresql" else "file"
    if choice == "postgres":
        info = _pg_conninfo()
        key: tuple = ("postgres", tuple(sorted(info.items())))
        if key not in _limiters:
            _limiters[key] = PostgresSlots(info)
        return _limiters[key]
    if choice != "file":
        raise EngineError(f"ENGINE_LIMITER={choice!r} is not one of auto, file, postgres", True)
    base = Path(getattr(settings, "ENGINE_LOCK_DIR", "") or Path(settings.VAR_DIR) / "locks")
    # Engine ids restart in every database (each test run has its own), so the database's
    # identity is part of the lock path: two databases never share an engine's slots.
    db_id = hashlib.sha256(str(connection.settings_dict["NAME"]).encode()).hexdigest()[:12]
    directory = base / db_id
    key = ("file", str(directory))
    if key not in _limiters:
        _limiters[key] = FileSlots(directory)
    return _limiters[key]
