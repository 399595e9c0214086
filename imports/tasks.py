"""Celery task of background imports: a thin adapter over imports.services."""

from __future__ import annotations

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

import rounds
from imports import services


@shared_task(name=services.RUN_TASK, bind=True)
def run_import(self, job_id: int) -> None:
    """Import one job's file. Foreground twin: ``python manage.py run_import JOB_ID``."""
    outcome = services.run_import_job(
        job_id, worker=rounds.worker_name(self), interrupts=(SoftTimeLimitExceeded,)
    )
    if outcome.status is rounds.Status.BUSY:
        services.enqueue_import(job_id, countdown=outcome.retry_in)
