"""Signal connections and job kinds of the search app, made in ``SearchConfig.ready``."""

from __future__ import annotations

import rounds
from annotation.signals import item_completed
from search.breaker import humans as breaker_humans
from search.breaker.data_quality import recover_statistics
from search.breaker.services import recover_runs as recover_breaker_runs
from search.breaker.transfer.services import recover_transfers
from search.runs.human_loop import on_item_completed
from search.runs.services import recover_runs
from search.topics import import_kinds as topic_import_kinds
from search.topics.generation import recover_tree_generations


def connect() -> None:
    item_completed.connect(on_item_completed, dispatch_uid="search.runs.human_loop")
    item_completed.connect(breaker_humans.on_item_completed, dispatch_uid="search.breaker.humans")
    rounds.register(rounds.JobKind("search run", recover_runs))
    rounds.register(rounds.JobKind("topic tree generation", recover_tree_generations))
    rounds.register(rounds.JobKind("breaker run", recover_breaker_runs))
    rounds.register(rounds.JobKind("breaker transfer", recover_transfers))
    rounds.register(rounds.JobKind("breaker statistics", recover_statistics))
    topic_import_kinds.register()
