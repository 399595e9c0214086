"""Celery tasks of the lexical app: ids in, call a service, decide the successor.

The only module of the app that queues a round's successor; services queue a job's first round
by task name through :func:`rounds.enqueue` and never import this module. Every job (mining,
rule generation, model evaluation) runs its rounds through :func:`rounds.run_round`.
"""

from __future__ import annotations

from celery import shared_task

import rounds
from lexical.evaluation import services as evaluation_services
from lexical.mining import services as mining_services
from lexical.rules import services as rule_services


@shared_task(name=mining_services.ADVANCE_TASK, bind=True)
def advance_mining(self, job_id: int, round_index: int) -> None:
    """One round of a mining job (one chunk of pairs, seed 004 §2.1), then its successor.

    Foreground twin: ``python manage.py mine_concepts CORPUS --foreground``.
    """
    rounds.run_round(
        self, mining_services.advance_mining, mining_services.enqueue_round, job_id, round_index
    )


@shared_task(name=rule_services.ADVANCE_TASK, bind=True)
def advance_rule_job(self, job_id: int, round_index: int) -> None:
    """One round of a rule job (a few concepts' rules, seed 004 §3), then its successor.

    Foreground twin: ``python manage.py generate_rules --engine NAME ...``.
    """
    rounds.run_round(
        self, rule_services.advance_job, rule_services.enqueue_round, job_id, round_index
    )


@shared_task(name=evaluation_services.ADVANCE_TASK, bind=True)
def advance_lexical_evaluation(self, evaluation_id: int, round_index: int) -> None:
    """One round of a model evaluation (the next batch of answers, §4), then its successor.

    Foreground twin: ``python manage.py evaluate_lexical --foreground``.
    """
    rounds.run_round(
        self,
        evaluation_services.advance_evaluation,
        evaluation_services.enqueue_round,
        evaluation_id,
        round_index,
    )
