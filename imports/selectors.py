"""Reads of import jobs: one permission-checked accessor (the uploader or staff)."""

from __future__ import annotations

from django.db.models import QuerySet

from core.access import visible_or_404
from imports import kinds
from imports.models import ImportJob


def jobs_for_user(user) -> QuerySet[ImportJob]:
    jobs = ImportJob.objects.select_related("created_by")
    if user.is_staff:
        return jobs
    if not user.is_authenticated:
        return jobs.none()
    return jobs.filter(created_by=user)


def job_for_user(user, pk: int) -> ImportJob:
    """A 404 for someone else's job: whether it exists is not theirs to know."""
    return visible_or_404(jobs_for_user(user), pk, "No such import job.")


def kind_label(job: ImportJob) -> str:
    try:
        return kinds.get(job.kind).label
    except LookupError:
        return job.kind


def result_url(job: ImportJob) -> str | None:
    if job.result_id is None:
        return None
    return kinds.get(job.kind).result_url(job.result_id)
