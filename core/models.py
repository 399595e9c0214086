from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone


class WorkerHeartbeat(models.Model):
    """The last sign of life of one Celery worker process, written by the worker itself."""

    hostname = models.CharField(max_length=255, unique=True)
    queues = models.CharField(max_length=255, blank=True)
    pid = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-last_seen_at"]

    def __str__(self) -> str:
        return f"{self.hostname} (last seen {self.last_seen_at:%Y-%m-%d %H:%M:%S})"

    def age_seconds(self, now=None) -> float:
        return ((now or timezone.now()) - self.last_seen_at).total_seconds()


class WorkerProbe(models.Model):
    """A round trip through broker and worker: created here, completed by a worker task."""

    token = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    completed_by = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"probe {self.token}"
