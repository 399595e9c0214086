"""A real task through a real Celery worker process on Redis, observed in the database."""

import pytest
from django.db import transaction

from core import health
from core.models import WorkerHeartbeat, WorkerProbe

pytestmark = pytest.mark.celery_worker


def test_probe_round_trip_through_a_real_worker(celery_worker):
    with transaction.atomic():
        probe = health.start_probe()

    celery_worker.wait_for(
        lambda: WorkerProbe.objects.filter(pk=probe.pk, completed_at__isnull=False).exists()
    )
    probe.refresh_from_db()
    assert probe.completed_by == celery_worker.hostname


def test_worker_heartbeat_makes_healthz_green(celery_worker, client):
    heartbeat = WorkerHeartbeat.objects.get(hostname=celery_worker.hostname)
    assert "default" in heartbeat.queues and "slow" in heartbeat.queues

    body = client.get("/healthz").json()

    assert body["status"] == "ok"
    assert body["worker"]["hostname"] == celery_worker.hostname
