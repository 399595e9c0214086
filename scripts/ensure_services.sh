#!/usr/bin/env bash
# Make sure PostgreSQL and Redis answer on 127.0.0.1; start them if they do not; fail loudly if
# they still do not. The test suite never skips them silently.
set -euo pipefail

wait_for() {  # name, check command...
    local name=$1; shift
    for _ in $(seq 1 30); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 1
    done
    echo "ERROR: $name is not reachable on 127.0.0.1 and could not be started." >&2
    return 1
}

pg_ready() { pg_isready -q -h 127.0.0.1 -p 5432; }
redis_ready() { python3 - <<'PY'
import socket
s = socket.create_connection(("127.0.0.1", 6379), timeout=2)
s.sendall(b"PING\r\n")
assert s.recv(16).startswith(b"+PONG")
PY
}

if ! pg_ready; then
    echo "PostgreSQL is down; starting it."
    if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
        pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
    fi
fi
wait_for PostgreSQL pg_ready

if ! redis_ready; then
    echo "Redis is down; starting it."
    if command -v redis-server >/dev/null; then
        mkdir -p /var/lib/redis /var/log/redis
        redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" \
            --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
    fi
fi
wait_for Redis redis_ready
echo "PostgreSQL and Redis are up."
