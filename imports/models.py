"""One row per background import: the stored upload, its progress and its outcome."""

from __future__ import annotations

from django.db import models

from rounds.models import LeasedJob


class ImportJob(LeasedJob):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        READING = "reading", "Reading"
        WRITING = "writing", "Writing"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    ACTIVE = (Status.QUEUED, Status.READING, Status.WRITING)
    ENDED = (Status.DONE, Status.FAILED)
    SUCCEEDED = (Status.DONE,)

    kind = models.CharField(max_length=50, help_text="A registered ImportKind's name.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    # The upload, kept until the job ends (under MEDIA_ROOT, i.e. var/media/imports/).
    file = models.FileField(upload_to="imports/%Y/%m/", max_length=255, blank=True)
    file_name = models.CharField(max_length=255)
    file_size = models.BigIntegerField()
    # What the form or API call said besides the file (a name, a protocol, ...), as JSON.
    options = models.JSONField(default=dict, blank=True)
    lines_total = models.PositiveIntegerField(default=0)
    lines_done = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True, help_text="'line N: reason' strings.")
    result_id = models.PositiveBigIntegerField(null=True, blank=True)
    summary = models.CharField(max_length=500, blank=True, help_text="What the import wrote.")
    attempts = models.PositiveSmallIntegerField(default=0)
    # Why it failed is ``errors``, line by line. The lease (rounds.leases): a worker killed
    # mid-import leaves a lease that runs out, and the sweep queues the job again.
    error = None  # type: ignore[assignment]  # Django removes an inherited field set to None

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The sweep's query: active jobs whose lease ran out or that nobody claimed.
            models.Index(fields=["status", "updated_at"], name="imports_job_status_idx"),
        ]

    def __str__(self) -> str:
        return f"import #{self.pk} ({self.kind}, {self.status})"

    @property
    def progress_percent(self) -> int:
        if self.status == self.Status.DONE:
            return 100
        return int(100 * self.lines_done / self.lines_total) if self.lines_total else 0
