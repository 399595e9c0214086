from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import WorkerHeartbeat, WorkerProbe


@pytest.mark.django_db
def test_healthz_reports_database_broker_and_missing_worker(client):
    response = client.get("/healthz")

    assert response.status_code == 200
    body = response.json()
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is True
    assert body["worker"] == {
        "ok": False,
        "hostname": None,
        "last_heartbeat": None,
        "age_seconds": None,
    }
    assert body["status"] == "degraded"


@pytest.mark.django_db
def test_healthz_shows_a_fresh_heartbeat_as_alive(client):
    WorkerHeartbeat.objects.create(hostname="w1@host", last_seen_at=timezone.now())

    body = client.get("/healthz").json()

    assert body["status"] == "ok"
    assert body["worker"]["ok"] is True
    assert body["worker"]["hostname"] == "w1@host"


@pytest.mark.django_db
def test_healthz_calls_a_stale_heartbeat_dead(client, settings):
    settings.WORKER_HEARTBEAT_SECONDS = 10
    WorkerHeartbeat.objects.create(
        hostname="w1@host", last_seen_at=timezone.now() - timedelta(seconds=31)
    )

    body = client.get("/healthz").json()

    assert body["worker"]["ok"] is False
    assert body["worker"]["age_seconds"] >= 31


@pytest.mark.django_db
def test_healthz_is_503_when_the_broker_is_unreachable(client, monkeypatch):
    from core import health

    monkeypatch.setattr(health, "check_broker", lambda: health.Check(False, "refused"))

    response = client.get("/healthz")

    assert response.status_code == 503
    assert response.json()["broker"] == {"ok": False, "detail": "refused"}


@pytest.mark.django_db
def test_health_page_htmx_request_gets_the_status_partial(admin_client):
    response = admin_client.get("/health/", headers={"HX-Request": "true"})

    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="health-status"' in html
    assert "<html" not in html


def test_probe_button_creates_a_probe_and_sends_it_after_commit(
    admin_client, django_capture_on_commit_callbacks, sent_tasks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post("/health/probe/")

    assert response.status_code == 302
    probe = WorkerProbe.objects.get()
    assert [(name, args) for name, args, _ in sent_tasks] == [
        ("platform.complete_probe", (probe.pk,))
    ]
