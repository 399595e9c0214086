"""Celery task of background imports: a thin adapter over imports.services."""

from __future__ import annotations

from celery import shared_task

import rounds
from imports import services


@shared_task(name=services.RUN_TASK, bind=True)
def run_import(self, job_id: int) -> None:
    """Import one job's file (again later while another worker holds it, or while the database
    is away). Foreground twin: ``python manage.py run_import JOB_ID``."""
    rounds.run_job_round(self, services.run_import_job, services.enqueue_import, job_id)
