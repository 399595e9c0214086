"""Celery tasks of the ranking app: ids in, one round, the successor decided by the kernel.

The only module that queues a round's successor; services queue a ranking's first round by task
name through :func:`rounds.enqueue` and never import this module.
"""

from __future__ import annotations

from celery import shared_task

import rounds
from ranking import services
from ranking.replays import services as replay_services
from ranking.subsets import services as subset_services


@shared_task(name=services.ADVANCE_TASK, bind=True)
def advance_ranking(self, ranking_id: int, round_index: int) -> None:
    """One round of a ranking (a QE chunk, or the whole ranking), then its successor.

    Foreground twin: ``python manage.py rank_systems ...``.
    """
    rounds.run_round(
        self, services.advance_ranking, services.enqueue_round, ranking_id, round_index
    )


@shared_task(name=subset_services.ADVANCE_TASK, bind=True)
def advance_discrimination(self, analysis_id: int, round_index: int) -> None:
    """One round of a discrimination analysis, then its successor.

    Foreground twin: ``python manage.py discriminability ...``.
    """
    rounds.run_round(
        self, subset_services.advance_analysis, subset_services.enqueue_round, analysis_id,
        round_index,
    )  # fmt: skip


@shared_task(name=replay_services.ADVANCE_TASK, bind=True)
def advance_replay(self, replay_id: int, round_index: int) -> None:
    """One round of a replay run (every policy over one chunk of seeds), then its successor.

    Foreground twin: ``python manage.py replay_allocation ...`` (inline, no row).
    """
    rounds.run_round(
        self, replay_services.advance_replay, replay_services.enqueue_round, replay_id,
        round_index,
    )  # fmt: skip
