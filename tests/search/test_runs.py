"""Search runs: configuration, rounds, budgets, determinism, samplers and controls."""

from __future__ import annotations

import importlib
import json
from datetime import timedelta
from decimal import Decimal
from unittest import mock

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from engines.models import CachedResponse, Engine, EngineCall
from engines.registry import resolve
from search import tasks
from search.bandit import default_choice
from search.models import Pull, SearchRun
from search.runs import services as run_services
from search.runs.config import RunConfigError, validate_config
from search.runs.selectors import run_summary, top_topics
from search.runs.services import (
    RunStateError,
    advance_run,
    cancel_run,
    pause_run,
    recover_runs,
    restore_policy,
    resume_run,
    run_in_foreground,
    start_search_run,
)
from tests.engines.factories import (
    EngineFactory,
    HeuristicEngineFactory,
    SyntheticEngineFactory,
)
from tests.engines.fake_openai import Reply
from tests.search.conftest import queue_rounds_settle_in_place, synthetic_run_config


@pytest.fixture(autouse=True)
def enqueued(monkeypatch) -> mock.Mock:
    """Rounds queued by the code under test are recorded, not sent."""
    return queue_rounds_settle_in_place(monkeypatch)


def synthetic_config(**overrides) -> dict:
    return synthetic_run_config(**({"name": "synthetic", "budget_pulls": 600} | overrides))


@pytest.fixture
def world(db):
    return SyntheticEngineFactory(name="world", params={"n_topics": 400, "seed": 1})


def corpus_config(tree, engine, **overrides) -> dict:
    config = {
        "name": "corpus run",
        "tree": tree.name,
        "sampler": "corpus",
        "difficulty_engine": engine.name,
        "tgt_lang": "cs",
        "algorithm": "epsilon_greedy",
        "budget_pulls": 12,
        "k": 2,
        "batch_size": 4,
    }
    return config | overrides


# --- configuration ----------------------------------------------------------------------------


def test_config_errors_name_every_bad_field(world):
    with pytest.raises(RunConfigError) as info:
        validate_config(
            {"sampler": "nope", "difficulty_engine": "missing", "k": 0, "colour": "red"}
        )
    errors = info.value.errors
    assert set(errors) >= {"name", "sampler", "difficulty_engine", "k", "config"}
    assert "colour" in errors["config"]
    assert SearchRun.objects.count() == 0


def test_config_rejects_unknown_algorithm_and_bad_params(world):
    with pytest.raises(RunConfigError) as info:
        validate_config(synthetic_config(algorithm="magic"))
    assert "known:" in info.value.errors["algorithm"]
    with pytest.raises(RunConfigError) as info:
        validate_config(synthetic_config(algorithm="epsilon_greedy", params={"epsilon": "x"}))
    assert "params" in info.value.errors


def test_corpus_run_needs_samples_for_every_leaf(db, corpus_tree):
    from search.topics.services import import_topic_tree

    bare = import_topic_tree({"Root": ["A", "B"]}, name="bare")
    engine = HeuristicEngineFactory(name="length")
    with pytest.raises(RunConfigError) as info:
        validate_config(corpus_config(bare, engine))
    assert "have no samples" in info.value.errors["sampler"]


def test_human_modes_need_a_crowd_and_a_target_language(db, corpus_tree):
    engine = HeuristicEngineFactory(name="length")
    with pytest.raises(RunConfigError) as info:
        validate_config(corpus_config(corpus_tree, engine, human_mode="replace", tgt_lang=""))
    assert "artificial-crowd" in info.value.errors["human_mode"]
    assert "tgt_lang" in info.value.errors


def test_inline_engine_spec_is_created_once_and_must_match(db):
    spec = {"name": "w", "kind": "synthetic", "capabilities": ["difficulty"],
            "params": {"n_topics": 50, "seed": 0}}  # fmt: skip
    start_search_run(synthetic_config(difficulty_engine=spec, k=3, budget_pulls=10), enqueue=False)
    start_search_run(synthetic_config(difficulty_engine=spec, k=3, budget_pulls=10), enqueue=False)
    with pytest.raises(RunConfigError, match="other settings"):
        validate_config(synthetic_config(difficulty_engine={**spec, "params": {"n_topics": 9}}))


def test_validating_a_config_writes_nothing(db):
    spec = {"name": "fresh", "kind": "synthetic", "capabilities": ["difficulty"],
            "params": {"n_topics": 50, "seed": 0}}  # fmt: skip
    fields = validate_config(synthetic_config(difficulty_engine=spec, k=3, budget_pulls=10))

    assert fields["difficulty_engine"].name == "fresh"
    assert not Engine.objects.exists()
    with pytest.raises(RunConfigError):
        start_search_run(synthetic_config(difficulty_engine=spec, k=0), enqueue=False)
    assert not Engine.objects.exists()


# --- rounds -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("budget", "policy"), [(40_000, "eb_ucb"), (80_000, "sequential_halving")])
def test_a_run_without_a_method_records_the_default_it_resolved_to(db, budget, policy):
    SyntheticEngineFactory(name="large world", params={"n_topics": 40_000, "seed": 1})
    config = synthetic_config(difficulty_engine="large world", budget_pulls=budget)
    config.pop("algorithm", None)
    run = start_search_run(config, enqueue=False)
    run.refresh_from_db()
    expected = default_choice(40_000, budget)
    assert run.algorithm == "default"
    assert run.method == {"policy": policy, "params": expected[1]}
    assert run.policy_state["policy"] == policy
    if policy == "eb_ucb":
        assert run.method["params"]["beta_noisy"] == 3.0
    assert run.resolved_algorithm == f"default → {policy}"


def test_an_existing_run_keeps_its_method_when_the_default_changes(world, monkeypatch):
    run = start_search_run(synthetic_config(algorithm="default", budget_pulls=300), enqueue=False)
    assert run.method["policy"] == "sequential_halving"  # 400 topics: below the size switch
    monkeypatch.setattr("search.bandit.registry.DEFAULT_SMALL", ("eb_ucb", {"beta": 2.0}))
    assert default_choice(400)[0] == "eb_ucb"
    run = SearchRun.objects.get(pk=run.pk)
    assert run.resolved_algorithm == "default → sequential_halving"
    assert restore_policy(run).name == "sequential_halving"
    # A run stored before "method" existed reports what its bandit state was built with.
    SearchRun.objects.filter(pk=run.pk).update(method={})
    run = SearchRun.objects.get(pk=run.pk)
    assert run.resolved_algorithm == "default → sequential_halving"


def test_the_migration_records_the_method_of_existing_runs(world):
    from django.apps import apps

    run = start_search_run(
        synthetic_config(algorithm="eb_ucb", params={"beta": 4.0}), enqueue=False
    )
    SearchRun.objects.filter(pk=run.pk).update(method={})
    migration = importlib.import_module("search.migrations.0010_run_method")
    migration.record_methods(apps, None)
    run.refresh_from_db()
    assert run.method["policy"] == "eb_ucb"
    assert run.method["params"]["beta"] == 4.0 and "budget" not in run.method["params"]


def test_synthetic_run_spends_the_budget_exactly_and_beats_random(world):
    run = start_search_run(synthetic_config(), enqueue=False)
    run = run_in_foreground(run.pk)
    assert run.status == "finished"
    assert run.pulls_done == Pull.objects.filter(run=run).count() == 600
    # Rounds hold at most a batch; halving stages may end a round early.
    assert run.round_index == len(run.history) >= 12
    pulls = [h["pulls"] for h in run.history]
    assert pulls == sorted(pulls) and pulls[-1] == 600
    summary = run_summary(run)
    assert len(summary["top_k"]) == 5
    # The recommended topics are truly harder than the average topic of the world.
    from engines.registry import resolve

    truth = resolve(world, "world").true_means
    assert summary["true_top_k_mean"] > float(truth.mean()) + 5
    assert summary["oracle_top_k_mean"] >= summary["true_top_k_mean"]
    assert restore_policy(run).stats.n_scored == 600
    assert run.worker_memory_mb > 0


def test_same_seed_same_run(world):
    first = run_in_foreground(start_search_run(synthetic_config(), enqueue=False).pk)
    second = run_in_foreground(start_search_run(synthetic_config(), enqueue=False).pk)
    assert first.result["top_k"] == second.result["top_k"]
    assert list(Pull.objects.filter(run=first).values_list("text", flat=True)) == list(
        Pull.objects.filter(run=second).values_list("text", flat=True)
    )


def test_a_re_run_round_selects_and_draws_the_same(world):
    """The basis of crash safety: a round whose commit never happened repeats itself."""
    run = start_search_run(synthetic_config(), enqueue=False)
    run_in_foreground(run.pk)  # a reference run with the same config
    reference = list(Pull.objects.filter(run=run, round_index=0).values_list("text", flat=True))
    again = start_search_run(synthetic_config(), enqueue=False)
    # A worker claims round 0 and dies before committing: its claim expires, nothing stored.
    SearchRun.objects.filter(pk=again.pk).update(
        claimed_by="dead@host:1:x", lease_expires_at=timezone.now() + timedelta(hours=1)
    )
    assert advance_run(again.pk, 0, worker="other@host:2:y").status == "busy"
    assert recover_runs(dead_worker_prefix="dead@host:") == [again.pk]
    assert advance_run(again.pk, 0, worker="other@host:2:y").status == "more"
    texts = list(Pull.objects.filter(run=again, round_index=0).values_list("text", flat=True))
    assert texts == reference


def test_stale_messages_are_dropped(world):
    run = start_search_run(synthetic_config(budget_pulls=100), enqueue=False)
    assert advance_run(run.pk, 0, worker="w:1:a").status == "more"
    assert advance_run(run.pk, 0, worker="w:1:b").status == "stale"
    assert Pull.objects.filter(run=run).count() == 50


def test_the_round_task_queues_its_successor(world, enqueued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = start_search_run(synthetic_config(), enqueue=True)
    enqueued.assert_called_once_with(run.pk, 0)
    with django_capture_on_commit_callbacks(execute=True):
        tasks.advance_search_run.run(run.pk, 0)  # the task decides the successor
    enqueued.assert_called_with(run.pk, 1)


def test_corpus_run_through_a_crowd_records_translations_and_costs(crowd, corpus_tree):
    run = run_in_foreground(start_search_run(corpus_config(corpus_tree, crowd), enqueue=False).pk)
    assert run.status == "finished" and run.pulls_done == 12
    pull = Pull.objects.filter(run=run).first()
    assert pull.translations == {"mt-a": f"[xx] {pull.text}"}
    assert pull.scores[0][:2] == ["mt-a", "qe"]
    assert pull.automatic_difficulty == pytest.approx(100 - pull.scores[0][2])
    assert pull.sample.topic == pull.topic and pull.topic.arm == pull.arm
    assert run.cost > 0
    assert run.cost == sum(
        EngineCall.objects.filter(scope=run.scope).values_list("cost", flat=True)
    )
    rows = top_topics(run)
    assert [r.rank for r in rows] == [1, 2] and rows[0].topic is not None


def test_repeated_pulls_of_a_topic_use_different_texts_until_exhausted(db, corpus_tree):
    engine = HeuristicEngineFactory(name="length")
    config = corpus_config(corpus_tree, engine, algorithm="greedy", params={"cap": 10},
                           budget_pulls=30, batch_size=5)  # fmt: skip
    run = run_in_foreground(start_search_run(config, enqueue=False).pk)
    for arm in range(6):
        samples = list(Pull.objects.filter(run=run, arm=arm).values_list("sample_id", flat=True))
        distinct = len(set(samples))
        assert distinct == min(len(samples), 4)


def test_heuristic_difficulty_is_the_negated_quality(db, corpus_tree):
    engine = HeuristicEngineFactory(name="length")
    run = run_in_foreground(start_search_run(corpus_config(corpus_tree, engine), enqueue=False).pk)
    pull = Pull.objects.filter(run=run).first()
    (quality,) = resolve(engine, "difficulty").estimate([pull.text], "en")
    assert quality < 0  # minus the length in tokens
    assert pull.automatic_difficulty == pull.difficulty == -quality


def test_money_budget_stops_the_run(crowd, corpus_tree):
    config = corpus_config(corpus_tree, crowd, budget_pulls=24, budget_money="0.0001")
    run = run_in_foreground(start_search_run(config, enqueue=False).pk)
    assert run.status == "finished"
    assert run.pulls_done == 4  # one round spent the money; the next selected nothing
    assert run.cost >= Decimal("0.0001")
    with pytest.raises(RunConfigError, match=r"at least 0\.0001"):
        validate_config(corpus_config(corpus_tree, crowd, budget_money="0.00001"))


def test_permanent_engine_error_fails_the_run_with_its_message(crowd, corpus_tree, fake_openai):
    fake_openai.push(*[Reply.error(401, "bad key")] * 8)
    run = run_in_foreground(start_search_run(corpus_config(corpus_tree, crowd), enqueue=False).pk)
    assert run.status == "failed"
    assert "401" in run.error or "bad key" in run.error
    assert Pull.objects.filter(run=run).count() == 0


def test_llm_sampler_draws_stores_and_reuses_snippets(crowd, fake_openai, db):
    from search.topics.services import import_topic_tree
    from tests.search.conftest import snippet

    def responder(body):
        prompt = body["messages"][-1]["content"]
        if "extracted_snippets" in prompt:
            topic = prompt.split("topic '", 1)[1].split("'", 1)[0]
            request = prompt.count("request number")
            snippets = [{"text": snippet(len(topic) + request, n), "source_url": "https://example.org/a"}
                        for n in range(3)]  # fmt: skip
            return Reply(json.dumps({"extracted_snippets": snippets}))
        from tests.engines.fake_openai import auto_reply

        return auto_reply(body)

    fake_openai.responder = responder
    # Grounding is switched on through the engine's parameters (here OpenAI's web search).
    EngineFactory(name="searcher", base_url=fake_openai.base_url, capabilities=["chat"],
                  params={"extra_body": {"web_search_options": {}}})  # fmt: skip
    tree = import_topic_tree(["Alpha", "Beta"], name="llm tree")
    config = corpus_config(tree, crowd, sampler="llm", sampler_engine="searcher", budget_pulls=8,
                           batch_size=2, algorithm="brute", params={"cap": 4})  # fmt: skip
    run = run_in_foreground(start_search_run(config, enqueue=False).pk)
    assert run.status == "finished", run.error
    assert run.pulls_done == 8
    assert tree.topics.filter(samples__origin="llm").distinct().count() == 2
    # 4 pulls per topic from batches of 3 snippets: two requests per topic, no duplicates.
    for arm in (0, 1):
        texts = list(Pull.objects.filter(run=run, arm=arm).values_list("text", flat=True))
        assert len(texts) == len(set(texts)) == 4
    sampling = [r for r in fake_openai.requests if "extracted_snippets" in r.prompt]
    assert len(sampling) == 4
    assert all(r.body["web_search_options"] == {} for r in sampling)
    sample = tree.topics.get(name="Alpha").samples.first()
    assert sample.source_url == "https://example.org/a"
    assert sample.origin_detail["engine"] == "searcher" and sample.origin_detail["run"] == run.pk
    assert CachedResponse.objects.filter(operation="complete").count() == 4


# --- controls --------------------------------------------------------------------------------


def test_pause_resume_and_cancel_at_round_boundaries(
    world, enqueued, django_capture_on_commit_callbacks
):
    run = start_search_run(synthetic_config(), enqueue=False)
    advance_run(run.pk, 0, worker="w:1:a")
    pause_run(run)
    assert advance_run(run.pk, 1, worker="w:1:a").status == "stopped"
    assert Pull.objects.filter(run=run).count() == 50
    with pytest.raises(RunStateError):
        pause_run(run)
    with django_capture_on_commit_callbacks(execute=True):
        resume_run(run)
    run.refresh_from_db()
    assert run.status == "running"
    cancel_run(run)
    run.refresh_from_db()
    assert run.status == "cancelled" and run.finished_at
    assert advance_run(run.pk, 1, worker="w:1:a").status == "stopped"
    with pytest.raises(RunStateError):
        resume_run(run)
    assert enqueued.call_count >= 1


def test_pausing_during_a_round_keeps_what_it_paid_for(world, monkeypatch):
    run = start_search_run(synthetic_config(), enqueue=False)
    original = run_services.score_texts

    def pause_midway(run_arg, draws):
        SearchRun.objects.filter(pk=run_arg.pk).update(status="paused")
        return original(run_arg, draws)

    monkeypatch.setattr(run_services, "score_texts", pause_midway)
    assert advance_run(run.pk, 0, worker="w:1:a").status == "stopped"
    run.refresh_from_db()
    assert run.status == "paused" and run.pulls_done == 50 and run.claimed_by == ""


# --- command -----------------------------------------------------------------------------------


def test_run_search_command_prints_the_json_summary(db, tmp_path, capsys):
    config = {
        "name": "cli",
        "sampler": "synthetic",
        "difficulty_engine": {"name": "synthetic-2k", "kind": "synthetic",
                              "capabilities": ["difficulty"],
                              "params": {"n_topics": 2000, "seed": 0}},
        "budget_pulls": 2000, "k": 10, "batch_size": 500,
    }  # fmt: skip
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    call_command("run_search", str(path), "--foreground", "--json")
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "finished" and out["pulls"] == out["budget"] == 2000
    assert len(out["top_k"]) == 10
    assert out["oracle_top_k_mean"] >= out["true_top_k_mean"] > 0
    assert set(out) >= {"run", "top_k_mean", "cost"}


def test_run_search_command_reports_bad_configs(db, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"name": "x", "sampler": "corpus"}')
    with pytest.raises(CommandError, match="difficulty_engine"):
        call_command("run_search", str(path))
    path.write_text("{nope")
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command("run_search", str(path))
    assert SearchRun.objects.count() == 0


def test_example_configs_are_valid(db):
    from pathlib import Path

    for path in sorted(Path("search/examples").glob("synthetic_*.json")):
        config = json.loads(path.read_text())
        fields = validate_config(config)
        assert fields["n_topics"] in (100_000, 1_000_000)
    # The others name engines and trees an admin creates; they parse and name known keys.
    for path in sorted(Path("search/examples").glob("*.json")):
        config = json.loads(path.read_text())
        if "budget_pulls" not in config:
            continue  # the demo tree itself
        with pytest.raises(RunConfigError) as info:
            validate_config(config | {"difficulty_engine": "absent"})
        assert "config" not in info.value.errors, path


def test_contextual_runs_use_the_tree_keywords(db, corpus_tree):
    engine = HeuristicEngineFactory(name="length")
    config = corpus_config(corpus_tree, engine, algorithm="contextual", budget_pulls=8)
    run = run_in_foreground(start_search_run(config, enqueue=False).pk)
    assert run.status == "finished" and run.pulls_done == 8
    assert np.isfinite(restore_policy(run).estimates().mean).sum() >= 1


def test_an_llm_judge_drives_a_run_on_its_0_100_scale(db, corpus_tree, fake_openai):
    judge = EngineFactory(name="judge", base_url=fake_openai.base_url, capabilities=["difficulty"])
    run = run_in_foreground(start_search_run(corpus_config(corpus_tree, judge), enqueue=False).pk)
    assert run.status == "finished", run.error
    pull = Pull.objects.filter(run=run).first()
    (quality,) = resolve(judge, "difficulty").estimate([pull.text], "en", "cs")
    assert 0 <= quality <= 100
    assert pull.automatic_difficulty == pytest.approx(100 - quality)
    judged = [r for r in fake_openai.requests if "[[[" in r.prompt]
    assert len(judged) == len({p.text for p in Pull.objects.filter(run=run)})
