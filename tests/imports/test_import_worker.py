"""Background imports on a real Celery worker: a big upload answered 202 is imported by the
worker exactly as a synchronous import, and a worker killed with kill -9 in the middle of the
writing transaction leaves nothing half-written; the sweep of its restart imports the file."""

from __future__ import annotations

import time

import pytest
from django.db import connection, connections, transaction
from rest_framework.test import APIClient

from difficulty import services as difficulty_services
from difficulty.models import DifficultyDataset
from imports.models import ImportJob
from tests.difficulty.test_difficulty_import import nothing_written
from tests.imports.conftest import dataset_lines, snapshot, upload

pytestmark = pytest.mark.celery_worker


def _done(job_id: int) -> bool:
    return ImportJob.objects.filter(pk=job_id, status__in=["done", "failed"]).exists()


def _post_big_file(user, lines: list[bytes]) -> ImportJob:
    api = APIClient()
    api.force_authenticate(user)
    response = api.post("/api/difficulty-datasets/import/", {"name": "big", "file": upload(lines)})
    assert response.status_code == 202, response.content
    return ImportJob.objects.get(pk=response.json()["id"])


def _synchronous(lines: list[bytes]) -> DifficultyDataset:
    return difficulty_services.import_difficulty_dataset(
        lines, name="sync", source_file_name="big.jsonl"
    )


def test_a_big_upload_is_imported_by_the_worker_as_a_synchronous_import_would(
    celery_worker_factory, admin_user, media
):
    lines = dataset_lines(3000)
    worker = celery_worker_factory(HARDSET_VAR_DIR=str(media.parent))
    job = _post_big_file(admin_user, lines)

    worker.wait_for(lambda: _done(job.pk), timeout=180)

    job.refresh_from_db()
    assert job.status == "done", job.errors
    assert (job.lines_done, job.lines_total, job.attempts, job.claimed_by) == (3000, 3000, 1, "")
    imported = DifficultyDataset.objects.get(pk=job.result_id)
    assert imported.created_by == admin_user
    assert snapshot(imported) == snapshot(_synchronous(lines))
    assert not list(media.rglob("*.jsonl"))  # the stored upload is gone once imported


def _lock_elsewhere(sql: str, params: list):
    """Run a locking query on a connection of its own, which holds the lock until rolled back."""
    other = connections.create_connection("default")
    other.set_autocommit(False)
    with other.cursor() as cursor:
        cursor.execute(sql, params)
    return other


def _backend_waiting_on_a_lock(statement: str) -> int | None:
    """The PostgreSQL backend (pid) of this database that waits on a lock running
    ``statement...``, if any."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # fresh statistics inside a transaction
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND query LIKE %s",
            [statement + "%"],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def _backend_gone(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
        return cursor.fetchone()[0] == 0


def test_kill_9_mid_import_writes_nothing_and_the_restarted_worker_finishes_it(
    celery_worker_factory, admin_user, media
):
    """The kill lands while the worker's transaction holds every row of the dataset, held
    there by row locks rather than by timing: first at its first INSERT (a dataset of the same
    name, not yet committed), then at its last statement, the one that marks the job done."""
    if connection.vendor != "postgresql":
        pytest.skip("locks that hold the worker mid-transaction need PostgreSQL")
    lines = dataset_lines(3000)
    job = _post_big_file(admin_user, lines)

    with transaction.atomic():
        DifficultyDataset.objects.create(name="big", origin="import")
        worker = celery_worker_factory(HARDSET_VAR_DIR=str(media.parent))
        worker.wait_for(
            lambda: _backend_waiting_on_a_lock('INSERT INTO "search_difficultydataset"')
        )
        assert ImportJob.objects.get(pk=job.pk).status == "writing"
        job_lock = _lock_elsewhere(
            "SELECT id FROM imports_importjob WHERE id = %s FOR UPDATE", [job.pk]
        )
        transaction.set_rollback(True)  # the worker's INSERT goes on, and so does its import
    try:
        worker.wait_for(lambda: _backend_waiting_on_a_lock('UPDATE "imports_importjob"'))
        backend = _backend_waiting_on_a_lock('UPDATE "imports_importjob"')
        worker.kill()
    finally:
        job_lock.rollback()
        job_lock.close()
    # The dead worker's backend finishes its UPDATE, finds no client and rolls back.
    assert backend is not None
    _wait_until(lambda: _backend_gone(backend))

    killed_at = ImportJob.objects.get(pk=job.pk)
    assert killed_at.status == "writing" and killed_at.result_id is None
    assert killed_at.claimed_by.startswith(f"{worker.hostname}:")
    assert nothing_written()

    # A supervisor restarts the worker under the same name; its sweep re-runs the import.
    restarted = celery_worker_factory(hostname=worker.hostname, HARDSET_VAR_DIR=str(media.parent))
    restarted.wait_for(lambda: _done(job.pk), timeout=180)

    job.refresh_from_db()
    assert job.status == "done", job.errors
    assert job.attempts == 2
    assert snapshot(DifficultyDataset.objects.get(pk=job.result_id)) == snapshot(
        _synchronous(lines)
    )


def _wait_until(condition, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s")
        time.sleep(0.2)
