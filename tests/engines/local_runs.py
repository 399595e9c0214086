"""A crowd search run over local-model engines, as the local-model tests drive one: created,
enqueued (the queue it lands on is returned), then run in the foreground."""

from __future__ import annotations


def crowd_search_on_local_models(monkeypatch, capture_on_commit) -> tuple[object, str]:
    """(the finished run, the Celery queue its first round was sent to) for a search run whose
    crowd is the engine named ``crowd``; six pulls over three topics."""
    from search.runs.services import enqueue_round, run_in_foreground, start_search_run
    from tests.search.conftest import crowd_run_config, make_corpus_tree

    tree = make_corpus_tree(n_topics=3, per_topic=2)
    run = start_search_run(crowd_run_config(tree, budget_pulls=6, batch_size=3), enqueue=False)
    queued: list[tuple] = []
    monkeypatch.setattr("rounds.queue.send_task", lambda *args: queued.append(args))
    with capture_on_commit(execute=True):
        enqueue_round(run.pk, 0)
    return run_in_foreground(run.pk), queued[0][2]
