"""Items from a finished search run and a difficulty dataset keep a frozen provenance; the demo."""

from __future__ import annotations

import io

import pytest

from challenge_sets import demo, services, validation
from challenge_sets.models import ChallengeItem, ChallengeSet
from challenge_sets.sources import SourceError
from difficulty.demo import load_demo as load_difficulty_demo
from difficulty.models import DifficultyDataset
from engines.demo import load_demo as load_engine_demo
from search.breaker.demo import DEMO_COMPARISON, load_breaker_demo
from search.demo import load_topic_demo
from search.models import BreakerRun, Pull, SearchRun
from search.runs.demo import CORPUS_RUN, load_run_demo
from search.runs.selectors import top_topics
from search.runs.services import run_in_foreground, start_search_run
from tests.challenge_sets.conftest import make_set
from tests.engines.conftest import fake_openai  # noqa: F401  (fixture)
from tests.search.conftest import crowd_run_config, make_corpus_tree, make_crowd


def test_search_run_top_topics_with_engines_topic_path_and_scores(db, fake_openai):  # noqa: F811
    make_crowd(fake_openai.base_url, translators=("mt-a", "mt-b"))
    config = crowd_run_config(make_corpus_tree(n_topics=6, per_topic=4), name="for a set")
    run = run_in_foreground(start_search_run(config, enqueue=False).pk)
    challenge_set = make_set(rows=[])
    result = services.add_items_from_source(
        challenge_set, "search_run", {"run": run.pk, "top_k": 2, "per_topic": 2}
    )
    assert result.added == 4
    top = top_topics(run, limit=2)
    items = list(ChallengeItem.objects.filter(challenge_set=challenge_set).order_by("id"))
    assert [i.provenance["topic_rank"] for i in items] == [1, 1, 2, 2]
    first = items[0]
    assert first.provenance["topic_path"] == top[0].topic.path
    assert first.provenance["run"]["id"] == run.pk
    assert first.provenance["run"]["config"]["seed"] == run.seed
    engines = first.provenance["run"]["engines"]
    assert engines["difficulty"]["kind"] == "artificial_crowd"
    assert sorted(e["name"] for e in engines["translators"]) == ["mt-a", "mt-b"]
    pull = Pull.objects.get(pk=int(first.origin_ref.split(":")[-1]))
    assert first.translations == pull.translations and len(first.provenance["automatic_scores"])
    assert first.automatic_difficulty == pull.automatic_difficulty
    assert first.provenance["run"]["difficulty_on_0_100"] is True
    # Chosen pulls: the same pull is not added twice; an unknown pull is refused, nothing written.
    again = services.add_items_from_source(challenge_set, "search_run",
                                           {"run": run.pk, "pulls": str(pull.pk)})  # fmt: skip
    assert (again.added, again.skipped) == (0, 1)
    with pytest.raises(SourceError, match="pulls not in run"):
        services.add_items_from_source(challenge_set, "search_run",
                                       {"run": run.pk, "pulls": f"{pull.pk},999999"})  # fmt: skip
    assert ChallengeItem.objects.filter(challenge_set=challenge_set).count() == 4
    # Frozen: the run changing later does not touch the snapshot.
    SearchRun.objects.filter(pk=run.pk).update(name="renamed", seed=99)
    first.refresh_from_db()
    assert first.provenance["run"]["name"] == "for a set"


def test_difficulty_dataset_hardest_subset(db):
    load_difficulty_demo(io.StringIO())
    dataset = DifficultyDataset.objects.get()
    challenge_set = make_set(rows=[])
    result = services.add_items_from_source(
        challenge_set, "difficulty_dataset", {"dataset": dataset.pk, "fraction": 0.05}
    )
    assert result.added == 24  # 5 % of 240 segments in each of the two pairs
    items = list(ChallengeItem.objects.filter(challenge_set=challenge_set))
    assert {i.language_pair for i in items} == {p.code for p in dataset.language_pairs.all()}
    hardest = min(items, key=lambda i: i.provenance["hardest_subset"]["rank"])
    assert hardest.provenance["dataset"]["name"] == dataset.name
    # Ranked by mean score, lowest first: the subset holds the highest difficulties.
    per_pair = [i for i in items if i.language_pair == hardest.language_pair]
    assert max(i.automatic_difficulty for i in per_pair) == hardest.automatic_difficulty


def test_demo_set_from_the_demo_runs_is_idempotent(db):
    out = io.StringIO()
    load_engine_demo(out)
    load_topic_demo(out)
    load_run_demo(out)
    load_breaker_demo(out)
    load_difficulty_demo(out)
    demo.load_demo(out)
    demo.load_demo(out)
    challenge_set = ChallengeSet.objects.get()
    items = ChallengeItem.objects.filter(challenge_set=challenge_set)
    origins = set(items.values_list("origin", flat=True))
    assert {"search_run", "difficulty_dataset", "breaker_run"} <= origins
    corpus = SearchRun.objects.get(name=CORPUS_RUN)
    assert items.filter(origin_ref__startswith=f"run:{corpus.pk}:").count() == 4
    # Regression: the rarity heuristic only ranks texts; its scores (about −0.004) were shown
    # as automatic difficulty 0.0 on the set's 0–100 scale. They stay in the provenance only.
    for item in items.filter(origin_ref__startswith=f"run:{corpus.pk}:"):
        assert item.automatic_difficulty is None
        assert item.provenance["run"]["difficulty_on_0_100"] is False
        assert isinstance(item.provenance["pull"]["automatic_difficulty"], float)
    # The two hardest selected texts of each method of the demo comparison.
    assert items.filter(origin="breaker_run").count() == 2 * 8
    for run in BreakerRun.objects.filter(comparison=DEMO_COMPARISON):
        hardest = sorted(run.chains.all(), key=lambda c: (c.selected_quality, c.index))[:2]
        refs = {f"breaker:{run.pk}:chain:{c.index}" for c in hardest}
        assert set(items.filter(origin="breaker_run", provenance__run__id=run.pk)
                   .values_list("origin_ref", flat=True)) == refs  # fmt: skip
    # Whatever has translations went to an ESA campaign annotators can open.
    if challenge_set.campaign_id:
        assert items.filter(validation="sent").exists()
    else:
        with pytest.raises(services.ChallengeSetError):
            validation.send_for_validation(challenge_set)
