"""Signal connections and job kinds of the search app, made in ``SearchConfig.ready``."""

from __future__ import annotations

import rounds
from annotation.signals import item_completed
from search.breaker import humans as breaker_humans
from search.breaker.data_quality import STATISTICS
from search.breaker.services import BREAKER_RUNS
from search.breaker.transfer.services import TRANSFERS
from search.runs.human_loop import on_item_completed
from search.runs.services import SEARCH_RUNS
from search.topics import import_kinds as topic_import_kinds
from search.topics.generation import TREE_GENERATIONS


def connect() -> None:
    item_completed.connect(on_item_completed, dispatch_uid="search.runs.human_loop")
    item_completed.connect(breaker_humans.on_item_completed, dispatch_uid="search.breaker.humans")
    rounds.register(SEARCH_RUNS, TREE_GENERATIONS, BREAKER_RUNS, TRANSFERS, STATISTICS)
    topic_import_kinds.register()
