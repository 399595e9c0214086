"""The fields every background job of the lexical app shares (mining, rule generation,
evaluation): a status, a lease the round kernel claims (``rounds.leases``), progress and cost."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    FINISHED = "finished", "Finished"
    CANCELLED = "cancelled", "Cancelled"
    FAILED = "failed", "Failed"


class LexicalJob(models.Model):
    """Abstract: one long job, run in rounds by workers; the row is the source of truth."""

    Status = JobStatus
    ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)

    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    error = models.TextField(blank=True)
    round_index = models.PositiveIntegerField(default=0)
    items_done = models.PositiveIntegerField(default=0)
    items_total = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=16, decimal_places=8, default=0)
    claimed_by = models.CharField(max_length=255, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]

    @property
    def is_finished(self) -> bool:
        return self.status in {JobStatus.FINISHED, JobStatus.CANCELLED, JobStatus.FAILED}

    @property
    def progress(self) -> float:
        return min(1.0, self.items_done / self.items_total) if self.items_total else 0.0
