"""Celery tasks of the difficulty app: thin adapters over services (ids in, rows as the truth)."""

from __future__ import annotations

from celery import shared_task

import rounds
from difficulty import services as difficulty_services


@shared_task(name=difficulty_services.ADVANCE_TASK, bind=True)
def advance_difficulty_evaluation(self, evaluation_id: int) -> None:
    """One round of a DEC evaluation, then its successor until the evaluation is done; a round
    cut short by the time limit runs its unit in flight again (engine answers are cached), and
    one whose database went away waits for it.

    Foreground twin: ``python manage.py run_difficulty_evaluation ID``.
    """
    rounds.run_job_round(
        self,
        difficulty_services.advance_difficulty_evaluation,
        difficulty_services.enqueue_evaluation_round,
        evaluation_id,
    )
