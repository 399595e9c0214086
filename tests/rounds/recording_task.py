"""A stand-in for a bound Celery task, for the round kernel's tests."""

from __future__ import annotations

from types import SimpleNamespace

from celery.exceptions import Retry


class RecordingTask:
    """Stands in for a bound Celery task: its request (node name and id), and what it was asked
    to retry."""

    def __init__(self, hostname: str | None = "celery@box") -> None:
        self.request = SimpleNamespace(hostname=hostname, id="task-1")
        self.retries: list[dict] = []

    def retry(self, **options) -> Retry:
        self.retries.append(options)
        return Retry("again")
