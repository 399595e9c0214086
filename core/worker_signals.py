"""Worker heartbeats: each worker process writes its own row every few seconds.

A thread in the worker's main process, not a beat schedule, so that every worker on every machine
reports itself and the health page can tell which ones are alive.
"""

from __future__ import annotations

import logging
import threading

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

import rounds

logger = logging.getLogger(__name__)
_stop = threading.Event()


def _beat_forever(hostname: str, queues: str) -> None:
    from core.health import record_heartbeat

    started_at = timezone.now()
    while not _stop.is_set():
        try:
            close_old_connections()
            record_heartbeat(hostname, queues, started_at)
        except Exception:  # a missed beat must never kill the worker; the page shows staleness
            logger.exception("could not record worker heartbeat")
        _stop.wait(settings.WORKER_HEARTBEAT_SECONDS)


@worker_ready.connect
def recover_after_restart(sender=None, **kwargs) -> None:
    """A worker starting under a node name owns nothing yet: claims that carry the name were
    its dead predecessor's, so their rounds are queued again at once (not after the lease).

    Connected before :func:`start_heartbeat` (receivers run in that order), so a worker's first
    heartbeat, which the health page and the tests read as "ready", comes after this sweep."""
    hostname = getattr(sender, "hostname", "") or ""
    try:
        rounds.sweep(dead_worker_prefix=f"{hostname}:" if hostname else None)
    except Exception:  # recovery must never stop a worker from starting; the sweep retries
        logger.exception("job recovery at worker start failed")


@worker_ready.connect
def start_heartbeat(sender=None, **kwargs) -> None:
    hostname = getattr(sender, "hostname", "") or "worker"
    queues = ",".join(sorted(q.name for q in (sender.app.amqp.queues.consume_from or {}).values()))
    _stop.clear()
    threading.Thread(
        target=_beat_forever, args=(hostname, queues), name="hardset-heartbeat", daemon=True
    ).start()


@worker_shutdown.connect
def stop_heartbeat(**kwargs) -> None:
    _stop.set()
