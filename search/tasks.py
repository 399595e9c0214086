"""Celery tasks of the search app: ids in, call a service, decide the successor.

The only module of the app that queues a round's successor; services queue a job's first round
by task name through :func:`rounds.enqueue` and never import this module.
"""

from __future__ import annotations

from celery import shared_task

import rounds
from search.breaker import data_quality
from search.breaker import services as breaker_services
from search.breaker.transfer import services as transfer_services
from search.runs import human_loop
from search.runs import services as run_services
from search.topics import generation as topic_generation

# --- Topic trees (seed 000) -------------------------------------------------------------------


@shared_task(name=topic_generation.GENERATE_TASK, bind=True)
def generate_topic_tree(self, tree_id: int) -> None:
    """Generate a topic tree with a chat engine; the tree row records the outcome.

    A lost database is waited out, not recorded: the tree is still "generating" in it, and the
    retry gets the answers that did arrive from the engine cache. Foreground twin:
    ``python manage.py generate_topic_tree``.
    """
    rounds.run_job_round(
        self,
        topic_generation.advance_generation,
        topic_generation.enqueue_tree_generation,
        tree_id,
    )


# --- Search runs (seed 000) ----------------------------------------------------------------


@shared_task(name=run_services.ADVANCE_TASK, bind=True)
def advance_search_run(self, run_id: int, round_index: int) -> None:
    """One round of a search run, then its successor: the next round, or this one again later.

    Foreground twin: ``python manage.py run_search --foreground``.
    """
    rounds.run_round(
        self, run_services.advance_run, run_services.enqueue_round, run_id, round_index
    )


@shared_task(name=human_loop.SETTLE_TASK)
def settle_search_run(run_id: int) -> None:
    """Feed human scores that arrived into an idle run's bandit; finish it when they are all in."""
    run_services.settle(run_id)


# --- MT-breaker runs (seed 001) ----------------------------------------------------------


@shared_task(name=breaker_services.ADVANCE_TASK, bind=True)
def advance_breaker_run(self, run_id: int, round_index: int) -> None:
    """One round of a breaker run (every active chain one step), then its successor.

    Foreground twin: ``python manage.py run_breaker --foreground``.
    """
    rounds.run_round(
        self, breaker_services.advance_run, breaker_services.enqueue_round, run_id, round_index
    )


@shared_task(name=transfer_services.ADVANCE_TASK, bind=True)
def advance_breaker_transfer(self, transfer_id: int, round_index: int) -> None:
    """One round of a transfer (the next batch of translations and scores), then its successor.

    Foreground twin: ``python manage.py run_breaker_transfer --foreground``.
    """
    rounds.run_round(
        self,
        transfer_services.advance_transfer,
        transfer_services.enqueue_round,
        transfer_id,
        round_index,
    )


@shared_task(name=data_quality.COMPUTE_TASK, bind=True)
def compute_breaker_statistics(self, stats_id: int, round_index: int) -> None:
    """A breaker run's data-quality statistics (one round; again later on a transient error).

    Foreground twin: ``python manage.py compute_breaker_statistics RUN``.
    """
    rounds.run_round(
        self,
        data_quality.compute_statistics,
        data_quality.enqueue_statistics,
        stats_id,
        round_index,
    )
