"""Celery tasks of the difficulty app: thin adapters over services (ids in, rows as the truth)."""

from __future__ import annotations

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

import rounds
from difficulty import services as difficulty_services


@shared_task(name=difficulty_services.ADVANCE_TASK, bind=True)
def advance_difficulty_evaluation(self, evaluation_id: int) -> None:
    """One round of a DEC evaluation, then its successor until the evaluation is done.

    Foreground twin: ``python manage.py run_difficulty_evaluation ID``.
    """
    try:
        outcome = difficulty_services.advance_difficulty_evaluation(
            evaluation_id, worker=rounds.worker_name(self), interrupts=(SoftTimeLimitExceeded,)
        )
    except SoftTimeLimitExceeded:
        # The unit in flight is run again by the next round (engine answers are cached).
        difficulty_services.enqueue_evaluation_round(evaluation_id)
        return
    if outcome.wants_successor:
        difficulty_services.enqueue_evaluation_round(evaluation_id, countdown=outcome.retry_in)
