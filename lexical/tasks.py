"""Celery tasks of the lexical app: ids in, call a service, decide the successor.

The only module of the app that queues a round's successor; services queue a job's first round
by task name through :func:`rounds.enqueue` and never import this module.
"""

from __future__ import annotations

import os

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

import rounds
from lexical.evaluation import services as evaluation_services


@shared_task(name=evaluation_services.ADVANCE_TASK, bind=True)
def advance_lexical_evaluation(self, evaluation_id: int, round_index: int) -> None:
    """One round of a model evaluation (the next batch of answers), then its successor.

    Foreground twin: ``python manage.py evaluate_lexical --foreground``.
    """
    worker = f"{self.request.hostname or 'worker'}:{os.getpid()}:{self.request.id}"
    try:
        outcome = evaluation_services.advance_evaluation(
            evaluation_id, round_index, worker=worker, interrupts=(SoftTimeLimitExceeded,)
        )
    except SoftTimeLimitExceeded:
        evaluation_services.enqueue_round(evaluation_id, round_index)
        return
    except Exception as exc:
        rounds.retry_when_database_is_back(self, exc)
        raise
    if outcome.wants_successor:
        successor = round_index if outcome.repeats_round else round_index + 1
        evaluation_services.enqueue_round(evaluation_id, successor, countdown=outcome.retry_in)
