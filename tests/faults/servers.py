"""Private database and broker servers for fault tests: a PostgreSQL cluster in a temporary
folder and a redis-server, each on a free loopback port, started, stopped and restarted by the
test itself (never the machine's shared services, which other suites use)."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import socket
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

# PostgreSQL refuses to run as root; the cluster then belongs to this system account.
PG_SYSTEM_USER = "postgres"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"{what} not within {timeout}s")


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if not initdb:
        raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    return Path(initdb).parent


@dataclass
class PrivatePostgres:
    """A throwaway cluster: trust auth on 127.0.0.1 only, no fsync (its data dies with it)."""

    folder: str
    port: int
    bin_dir: str

    @classmethod
    def create(cls, folder: Path) -> PrivatePostgres:
        server = cls(str(folder), free_port(), str(_pg_bin()))
        folder.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(folder, PG_SYSTEM_USER)
        server._run("initdb", "-D", server.data, "-U", "postgres", "--auth=trust", "-E", "UTF8")
        return server

    @classmethod
    def from_env(cls, value: str) -> PrivatePostgres:
        return cls(**json.loads(value))

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @property
    def data(self) -> str:
        return str(Path(self.folder) / "data")

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, program: str, *args: str) -> None:
        command = [str(Path(self.bin_dir) / program), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", PG_SYSTEM_USER, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=180)
        if done.returncode:
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr[-2000:]}")

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.folder}"
            " -c fsync=off -c full_page_writes=off -c max_connections=200"
        )
        log = str(Path(self.folder) / "server.log")
        self._run("pg_ctl", "start", "-w", "-t", "120", "-D", self.data, "-l", log, "-o", options)
        wait_until(lambda: _accepts(self.port), 60, "PostgreSQL accepting connections")

    def stop(self) -> None:
        """Fast shutdown: every open session is cut, as in a server restart or failover."""
        self._run("pg_ctl", "stop", "-w", "-t", "120", "-m", "fast", "-D", self.data)


@dataclass
class PrivateRedis:
    """A redis-server that keeps nothing on disk: a restart loses every queued message."""

    folder: str
    port: int

    @classmethod
    def create(cls, folder: Path) -> PrivateRedis:
        folder.mkdir(parents=True, exist_ok=True)
        return cls(str(folder), free_port())

    @classmethod
    def from_env(cls, value: str) -> PrivateRedis:
        return cls(**json.loads(value))

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> subprocess.Popen:
        redis_server = shutil.which("redis-server")
        if not redis_server:
            raise RuntimeError("redis-server is not installed")
        process = subprocess.Popen(
            [
                redis_server, "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", self.folder, "--save", "", "--appendonly", "no", "--daemonize", "no",
            ],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        wait_until(lambda: _accepts(self.port), 60, "redis-server accepting connections")
        return process

    def stop(self) -> None:
        """SHUTDOWN NOSAVE on its own port (whichever process started it): every queued and
        unacknowledged message is gone, as when a broker without persistence restarts."""
        import redis

        with contextlib.suppress(redis.ConnectionError):  # already down
            redis.Redis(host="127.0.0.1", port=self.port).shutdown(nosave=True)
        wait_until(lambda: not _accepts(self.port), 60, "redis-server gone")
