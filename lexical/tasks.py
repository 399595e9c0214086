"""Celery tasks of the lexical app: ids in, call a service, decide the successor.

The only module of the app that queues a round's successor; services queue a job's first round
by task name through :func:`rounds.enqueue` and never import this module. Every job (mining,
rule generation, model evaluation) runs its rounds through :func:`_run_round`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

import rounds
from lexical.evaluation import services as evaluation_services
from lexical.mining import services as mining_services
from lexical.rules import services as rule_services


def _run_round(
    task: Any, service: ModuleType, advance: Callable[..., Any], job_id: int, round_index: int
) -> None:
    """Run one round of a job with ``advance`` and queue its successor through ``service``."""
    worker = f"{task.request.hostname or 'worker'}:{os.getpid()}:{task.request.id}"
    try:
        outcome = advance(job_id, round_index, worker=worker, interrupts=(SoftTimeLimitExceeded,))
    except SoftTimeLimitExceeded:
        service.enqueue_round(job_id, round_index)
        return
    except Exception as exc:
        rounds.retry_when_database_is_back(task, exc)
        raise
    if outcome.wants_successor:
        successor = round_index if outcome.repeats_round else round_index + 1
        service.enqueue_round(job_id, successor, countdown=outcome.retry_in)


@shared_task(name=mining_services.ADVANCE_TASK, bind=True)
def advance_mining(self, job_id: int, round_index: int) -> None:
    """One round of a mining job (one chunk of pairs, seed 004 §2.1), then its successor.

    Foreground twin: ``python manage.py mine_concepts CORPUS --foreground``.
    """
    _run_round(self, mining_services, mining_services.advance_mining, job_id, round_index)


@shared_task(name=rule_services.ADVANCE_TASK, bind=True)
def advance_rule_job(self, job_id: int, round_index: int) -> None:
    """One round of a rule job (a few concepts' rules, seed 004 §3), then its successor.

    Foreground twin: ``python manage.py generate_rules --engine NAME ...``.
    """
    _run_round(self, rule_services, rule_services.advance_job, job_id, round_index)


@shared_task(name=evaluation_services.ADVANCE_TASK, bind=True)
def advance_lexical_evaluation(self, evaluation_id: int, round_index: int) -> None:
    """One round of a model evaluation (the next batch of answers, §4), then its successor.

    Foreground twin: ``python manage.py evaluate_lexical --foreground``.
    """
    _run_round(
        self,
        evaluation_services,
        evaluation_services.advance_evaluation,
        evaluation_id,
        round_index,
    )
