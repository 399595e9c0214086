"""Platform health: database and broker reachability, worker heartbeats and probes."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime

from celery import current_app as app
from django.conf import settings
from django.db import connection
from django.utils import timezone

import rounds
from core.models import WorkerHeartbeat, WorkerProbe


@dataclass(frozen=True)
class Check:
    ok: bool
    detail: str = ""


def check_database() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "unreachable" to a health probe
        return Check(False, f"{type(exc).__name__}: {exc}")
    return Check(True, connection.vendor)


def check_broker() -> Check:
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
            transport = conn.transport_cls
    except Exception as exc:  # kombu raises transport-specific errors
        return Check(False, f"{type(exc).__name__}: {exc}")
    return Check(True, str(transport))


def latest_heartbeat() -> WorkerHeartbeat | None:
    try:
        return WorkerHeartbeat.objects.order_by("-last_seen_at").first()
    except Exception:  # the database check reports the cause
        return None


def worker_is_alive(heartbeat: WorkerHeartbeat | None, now: datetime | None = None) -> bool:
    if heartbeat is None:
        return False
    # Three missed beats before we call a worker gone: one slow write is not an outage.
    return heartbeat.age_seconds(now) <= 3 * settings.WORKER_HEARTBEAT_SECONDS


def record_heartbeat(hostname: str, queues: str, started_at: datetime) -> None:
    WorkerHeartbeat.objects.update_or_create(
        hostname=hostname,
        defaults={
            "queues": queues,
            "pid": os.getpid(),
            "started_at": started_at,
            "last_seen_at": timezone.now(),
        },
    )


def complete_probe(probe_id: int, hostname: str) -> None:
    WorkerProbe.objects.filter(pk=probe_id, completed_at__isnull=True).update(
        completed_at=timezone.now(), completed_by=hostname
    )


PROBE_TASK = "platform.complete_probe"


def start_probe() -> WorkerProbe:
    """Create a probe and send it to the default queue once the row is committed."""
    probe = WorkerProbe.objects.create()
    rounds.enqueue(PROBE_TASK, (probe.pk,))
    return probe


def report() -> dict:
    database = check_database()
    broker = check_broker()
    heartbeat = latest_heartbeat() if database.ok else None
    alive = worker_is_alive(heartbeat)
    healthy = database.ok and broker.ok and alive
    return {
        "status": "ok" if healthy else "degraded",
        "database": {"ok": database.ok, "detail": database.detail},
        "broker": {"ok": broker.ok, "detail": broker.detail},
        "worker": {
            "ok": alive,
            "hostname": heartbeat.hostname if heartbeat else None,
            "last_heartbeat": heartbeat.last_seen_at.isoformat() if heartbeat else None,
            "age_seconds": round(heartbeat.age_seconds(), 1) if heartbeat else None,
        },
    }
