"""The demo runs ``load_demo`` adds: two finished, one waiting for humans; idempotent."""

from __future__ import annotations

from engines.demo import load_demo as load_engine_demo
from search.demo import load_topic_demo
from search.models import Pull, SearchRun
from search.runs.demo import CORPUS_RUN, HUMAN_RUN, SYNTHETIC_RUN, load_run_demo


class Out:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, line: str) -> None:
        self.lines.append(line)


def test_demo_runs_are_finished_or_waiting_and_loaded_once(db, shared_data):
    out = Out()
    load_engine_demo(out)
    load_topic_demo(out)
    load_run_demo(out)

    synthetic = SearchRun.objects.get(name=SYNTHETIC_RUN)
    assert synthetic.status == "finished" and synthetic.pulls_done == 4800
    assert synthetic.result["oracle_top_k_mean"] >= synthetic.result["true_top_k_mean"]
    corpus = SearchRun.objects.get(name=CORPUS_RUN)
    assert corpus.status == "finished" and corpus.tree.name == "Demo topics"
    human = SearchRun.objects.get(name=HUMAN_RUN)
    assert human.status == "waiting" and human.campaign is not None
    sent = Pull.objects.filter(run=human, human_status="sent").count()
    assert 1 <= sent <= 6
    assert human.campaign.items.count() == sent  # one replayed translator: one item per pull

    load_run_demo(Out())
    assert SearchRun.objects.count() == 3
    assert Pull.objects.count() == 4800 + corpus.pulls_done + human.pulls_done
