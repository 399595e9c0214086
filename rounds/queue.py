"""Queue a task by its name once the current transaction commits.

By name, so services never import task modules (the cycle services → tasks → services is what
this kernel exists to remove), and on commit, so a worker never sees a row before it exists.
"""

from __future__ import annotations

from typing import Any

from celery import current_app
from django.db import transaction


def send_task(
    task_name: str, args: tuple[Any, ...], queue: str | None, countdown: float | None
) -> None:
    """Hand the message to the broker now (tests replace this to see what was queued)."""
    current_app.send_task(task_name, args=args, queue=queue, countdown=countdown)


def enqueue(
    task_name: str,
    args: tuple[Any, ...],
    *,
    queue: str | None = None,
    countdown: float | None = None,
) -> None:
    transaction.on_commit(lambda: send_task(task_name, args, queue, countdown))
