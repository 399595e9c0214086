"""Demo search runs for ``load_demo``: finished runs to look at, and one waiting for humans.

* a synthetic run over the 3.2k-topic world of seed 000 §3.3 (engine ``synthetic-3k``),
* a corpus run over the authored "Demo topics" tree with the ``rarity`` heuristic,
* when the WMT24 replay engine is loaded: a run over the WMT24 domains whose crowd replays the
  WMT24 translations and their scores, in ``replace`` mode, waiting for annotators.

All offline and run in the foreground here (seconds); idempotent by run name.
"""

from __future__ import annotations

import json

from engines.demo import REPLAY_NAME, WMT24_PATH
from engines.models import Engine
from engines.services import save_engine
from search.models import SearchRun, TopicTree
from search.runs.config import RunConfigError
from search.runs.services import run_in_foreground, start_search_run
from search.topics.services import import_corpus, import_topic_tree

SYNTHETIC_RUN = "Demo: synthetic world, 3.2k topics"
CORPUS_RUN = "Demo: rare words in the demo topics"
HUMAN_RUN = "Demo: WMT24 domains with humans in the loop"
WMT24_TREE = "WMT24 en-cs domains"
WMT24_CROWD = "wmt24-crowd"


def _run_once(config: dict, stdout) -> None:
    if SearchRun.objects.filter(name=config["name"]).exists():
        return
    try:
        run = start_search_run(config, enqueue=False)
    except RunConfigError as exc:
        stdout.write(f"search: demo run {config['name']!r} skipped: {exc}")
        return
    run = run_in_foreground(run.pk)
    stdout.write(f"search: demo run {run.name!r} {run.status} after {run.pulls_done} pulls")


def _wmt24_tree() -> TopicTree:
    tree = TopicTree.objects.filter(name=WMT24_TREE).first()
    if tree is not None:
        return tree
    lines, domains = [], set()
    with WMT24_PATH.open(encoding="utf-8") as handle:
        for row in map(json.loads, handle):
            domains.add(row["domain"])
            lines.append(json.dumps({"topic": row["domain"], "text": row["src"]}))
    tree = import_topic_tree(
        sorted(domains),
        name=WMT24_TREE,
        description="The four WMT24 General MT domains; texts are the English sources.",
    )
    import_corpus(tree, "\n".join(lines), file_name=WMT24_PATH.name)
    return tree


def _wmt24_crowd() -> Engine:
    return Engine.objects.filter(name=WMT24_CROWD).first() or save_engine(
        {
            "name": WMT24_CROWD,
            "kind": "artificial_crowd",
            "capabilities": ["difficulty"],
            "description": "Replays one WMT24 system's translations and their human ESA scores.",
            "params": {"translators": [REPLAY_NAME], "quality_estimators": [REPLAY_NAME]},
        }
    )


def load_run_demo(stdout) -> None:
    _run_once(
        {"name": SYNTHETIC_RUN, "sampler": "synthetic", "difficulty_engine": "synthetic-3k",
         "budget_pulls": 4800, "k": 10, "batch_size": 200, "seed": 0},
        stdout,
    )  # fmt: skip
    _run_once(
        {"name": CORPUS_RUN, "tree": "Demo topics", "sampler": "corpus",
         "difficulty_engine": "rarity", "budget_pulls": 40, "k": 3, "batch_size": 4},
        stdout,
    )  # fmt: skip
    if not (WMT24_PATH.is_file() and Engine.objects.filter(name=REPLAY_NAME).exists()):
        stdout.write("search: WMT24 data absent; the human-in-the-loop demo run is skipped")
        return
    _wmt24_tree()
    _wmt24_crowd()
    _run_once(
        {"name": HUMAN_RUN, "tree": WMT24_TREE, "sampler": "corpus",
         "difficulty_engine": WMT24_CROWD, "src_lang": "en", "tgt_lang": "cs",
         "budget_pulls": 40, "k": 2, "batch_size": 4, "human_mode": "replace",
         "human_settings": {"rule": "top_k", "per_topic": 2, "max_items": 6}},
        stdout,
    )  # fmt: skip
