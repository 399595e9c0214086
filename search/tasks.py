"""Celery tasks of the search app: thin adapters over services (ids in, rows as the truth)."""

from __future__ import annotations

import os

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from search import difficulty_services, topic_generation

# --- Difficulty evaluations (seed 002) -------------------------------------------------------


@shared_task(name="search.advance_difficulty_evaluation", bind=True)
def advance_difficulty_evaluation(self, evaluation_id: int) -> None:
    """One round of a DEC evaluation; queues the next round until the evaluation is done.

    Foreground twin: ``python manage.py run_difficulty_evaluation ID``.
    """
    worker = f"{self.request.hostname or 'worker'}:{self.request.id}"
    try:
        outcome = difficulty_services.advance_difficulty_evaluation(
            evaluation_id, worker=worker, interrupts=(SoftTimeLimitExceeded,)
        )
    except SoftTimeLimitExceeded:
        # The unit in flight is run again by the next round (engine answers are cached).
        difficulty_services.enqueue_evaluation_round(evaluation_id)
        return
    if outcome.status == "more":
        difficulty_services.enqueue_evaluation_round(evaluation_id)
    elif outcome.status == "busy":
        # A redelivered round while a dead worker's lease runs out: come back after it.
        difficulty_services.enqueue_evaluation_round(evaluation_id, countdown=outcome.retry_in)


# --- Topic trees (seed 000) -------------------------------------------------------------------


@shared_task(name="search.generate_topic_tree")
def generate_topic_tree(tree_id: int) -> None:
    """Generate a topic tree with a chat engine; the tree row records the outcome.

    Foreground twin: ``python manage.py generate_topic_tree``.
    """
    try:
        topic_generation.generate_topic_tree(tree_id)
    except SoftTimeLimitExceeded:
        topic_generation.mark_generation_failed(
            tree_id, "the engine took longer than the task time limit; try again"
        )
    except Exception as exc:
        # A tree left "generating" would keep its page polling forever; record, then re-raise
        # so the worker log has the traceback.
        topic_generation.mark_generation_failed(tree_id, f"unexpected error: {exc}")
        raise


# --- Search runs (seed 000) ----------------------------------------------------------------


@shared_task(name="search.advance_search_run", bind=True)
def advance_search_run(self, run_id: int, round_index: int) -> None:
    """One round of a search run; the round queues its successor on commit.

    The worker name starts with the Celery node name, so a worker restarted under the same name
    knows that claims carrying it belonged to its dead predecessor (``recover_runs``).
    """
    from search import run_services

    worker = f"{self.request.hostname or 'worker'}:{os.getpid()}:{self.request.id}"
    try:
        outcome = run_services.advance_run(
            run_id, round_index, worker=worker, interrupts=(SoftTimeLimitExceeded,)
        )
    except SoftTimeLimitExceeded:
        run_services.enqueue_round(run_id, round_index)
        return
    if outcome.status in ("busy", "retry"):
        run_services.enqueue_round(run_id, round_index, countdown=outcome.retry_in)


@shared_task(name="search.settle_search_run")
def settle_search_run(run_id: int) -> None:
    """Feed human scores that arrived into an idle run's bandit; finish it when they are all in."""
    from search import run_services

    run_services.settle(run_id)


@shared_task(name="search.recover_runs")
def recover_runs() -> None:
    """Periodic sweep (beat): rounds nobody works on, human deadlines that passed."""
    from search import run_services

    run_services.recover_runs()
