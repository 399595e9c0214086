"""The Celery application.

Settings live in ``config/settings.py`` under the ``CELERY_`` prefix: JSON only, ``acks_late``
with prefetch 1, soft and hard time limits, no result backend (the database rows are the truth).
Engine calls go to the ``slow`` queue so that quick bookkeeping tasks never wait behind them.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("hardset")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def slow_queue() -> str:
    """Name of the queue for tasks that call engines (LLMs, MT, QE)."""
    from django.conf import settings

    return settings.CELERY_SLOW_QUEUE
