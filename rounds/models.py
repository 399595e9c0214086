"""The fields every long job's row shares: abstract models, no table of their own.

A job's row is the truth about it: its status and why it failed, the lease a round holds on it
(:mod:`rounds.leases`), who started it and when it started, changed and ended.
:class:`LeasedJob` is that much (a job run as one message whose row says what is left: a DEC
evaluation, an import, a topic-tree generation); :class:`RoundJob` adds the round number a
numbered round claims and the money the job's engine calls cost; :class:`CountedJob` adds the
items done out of a total (mining, rule jobs, evaluations, transfers).

A model whose statuses differ from :class:`JobStatus` redeclares ``Status`` and ``status``
and says which of them are ``ACTIVE`` (a round may claim the job, the sweep recovers it),
``ENDED`` and ``SUCCEEDED``.

Imported from the apps' ``models`` modules only (defining a model needs the app registry).
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.db import models


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    FINISHED = "finished", "Finished"
    CANCELLED = "cancelled", "Cancelled"
    FAILED = "failed", "Failed"


class LeasedJob(models.Model):
    """Abstract: one long job, run by workers under a lease; the row is the source of truth."""

    Status: Any = JobStatus
    ACTIVE: ClassVar[tuple[str, ...]] = (JobStatus.QUEUED, JobStatus.RUNNING)
    ENDED: ClassVar[tuple[str, ...]] = (JobStatus.FINISHED, JobStatus.CANCELLED, JobStatus.FAILED)
    SUCCEEDED: ClassVar[tuple[str, ...]] = (JobStatus.FINISHED,)

    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    error = models.TextField(blank=True)
    # A lease, not a lock: a round holds the row until it finishes or the lease runs out (a
    # killed worker), after which a redelivered round may take it over.
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
        return self.status in self.ENDED

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE


class RoundJob(LeasedJob):
    """Abstract: a job whose rounds carry a number, and whose engine calls cost money."""

    round_index = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=16, decimal_places=8, default=0)

    class Meta(LeasedJob.Meta):
        abstract = True


class CountedJob(RoundJob):
    """Abstract: a round job that works through a known number of items."""

    items_done = models.PositiveIntegerField(default=0)
    items_total = models.PositiveIntegerField(default=0)

    class Meta(RoundJob.Meta):
        abstract = True

    @property
    def progress(self) -> float:
        return min(1.0, self.items_done / self.items_total) if self.items_total else 0.0
