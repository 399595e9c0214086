"""A stand-in for a bound Celery task, for the round kernel's tests."""

from __future__ import annotations

from types import SimpleNamespace

from celery.exceptions import Retry


class RecordingTask:
    """Stands in for a bound Celery task: its request (node name, id, retry number), and what
    it was asked to retry."""

    def __init__(self, hostname: str | None = "celery@box", retries: int = 0) -> None:
        self.request = SimpleNamespace(hostname=hostname, id="task-1", retries=retries)
        self.retries: list[dict] = []

    def retry(self, **options) -> Retry:
        self.retries.append(options)
        return Retry("again")
