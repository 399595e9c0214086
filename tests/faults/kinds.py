"""Every kind of long job, as the fault scenario (``scenarios.py``) starts, watches and checks it.

Each kind says how to start one job whose rounds take a while (engines on the fake OpenAI server
answer slowly; jobs without engines get small rounds), when the worker is in the middle of one
of its rounds (the moment PostgreSQL is restarted), and what the finished job must hold: every
result once, and every paid engine answer paid once (one ledger row per cache entry).

A new kind of job (``rounds.jobs``) gets its entry here and so its fault test.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db.models import Model

from difficulty import services as difficulty_services
from difficulty.dataset_format import ReferenceRule
from difficulty.import_kinds import DATASET_KIND, dataset_options
from difficulty.models import DifficultyDataset, DifficultyEvaluation
from engines.models import CachedResponse, EngineCall
from imports import services as import_services
from imports.models import ImportJob
from lexical.evaluation.services import start_lexical_evaluation
from lexical.mining.services import start_mining
from lexical.mining.synthetic import expected_concepts
from lexical.models import LexicalAnswer, LexicalEvaluation, MiningJob, Rule, RuleJob
from lexical.rules.services import start_rule_jobs
from ranking.models import SystemRanking
from ranking.replays.models import ReplayRun
from ranking.replays.services import start_replay
from ranking.services import start_ranking
from ranking.subsets.models import DiscriminationAnalysis
from ranking.subsets.services import start_analysis
from search.breaker.data_quality import start_statistics
from search.breaker.services import run_in_foreground as run_breaker
from search.breaker.services import start_breaker_run
from search.breaker.transfer.services import start_transfer
from search.models import (
    BreakerRun,
    BreakerStatistics,
    BreakerStep,
    BreakerTransfer,
    Pull,
    SearchRun,
    TopicTree,
    TransferResult,
)
from search.runs.services import restore_policy
from search.topics.generation import start_tree_generation
from tests.engines.factories import EngineFactory
from tests.engines.fake_openai import FakeOpenAI, Reply, auto_reply, breaker_reply
from tests.imports.conftest import dataset_lines, snapshot, upload
from tests.lexical.eval_helpers import make_engines, make_selection, scripted
from tests.lexical.mining_support import synthetic_corpus
from tests.lexical.rule_helpers import make_mining_job, remote_engine
from tests.ranking.support import make_version, tiered_dataset, version_items
from tests.search.breaker_helpers import offline_config, remote_config, remote_engines
from tests.search.test_run_worker import crowd_run


@dataclass(frozen=True)
class FaultKind:
    """``start(server, folder)`` starts one job (queued on commit) and returns its row;
    ``mid_round(row, server)`` says a round is under way; ``check(row)`` asserts the finished
    job; ``worker_env(folder)`` is the worker's extra environment."""

    name: str
    start: Callable[[FakeOpenAI, Path], Model]
    mid_round: Callable[[Any, FakeOpenAI], bool]
    check: Callable[[Any], None]
    worker_env: Callable[[Path], dict[str, str]] = field(default=lambda folder: {})


def engines_at_work(row: Any, server: FakeOpenAI) -> bool:
    """A round holds the job and its engine requests are in flight."""
    return bool(row.claimed_by) and server.in_flight > 0


def assert_paid_once(scope: str) -> None:
    """Each successful paid request is one cache entry, and each cache entry was paid once.

    Paid requests are those sent to a server (the fake OpenAI one); a local engine's calls (an
    artificial crowd's estimate over its members' answers) are booked but neither paid nor
    cached."""
    paid = EngineCall.objects.filter(scope=scope, cache_hit=False, error="").exclude(
        engine__base_url=""
    )
    operations = set(paid.values_list("operation", flat=True))
    assert operations, f"no paid engine call under {scope}"
    for operation in operations:
        cached = CachedResponse.objects.filter(operation=operation).count()
        assert paid.filter(operation=operation).count() == cached, operation


def assert_finished(row: Any, status: str = "finished") -> None:
    assert row.status == status, getattr(row, "error", None) or getattr(row, "errors", None)


# --- Search runs and breaker runs (seeds 000, 001) --------------------------------------------

SEARCH_BUDGET, SEARCH_BATCH = 24, 4


def _start_search_run(server: FakeOpenAI, folder: Path) -> SearchRun:
    server.latency = 0.4  # rounds take a while, so the outage lands inside one
    return crowd_run(server, budget=SEARCH_BUDGET, batch=SEARCH_BATCH)


def search_mid_round(row: SearchRun, server: FakeOpenAI) -> bool:
    # Two requests (translate + QE) per committed pull: past them, this round's are in flight.
    in_flight = len(server.requests) > 2 * row.pulls_done + SEARCH_BATCH
    return row.pulls_done >= 2 * SEARCH_BATCH and bool(row.claimed_by) and in_flight


def check_search_run(run: SearchRun) -> None:
    assert_finished(run)
    pulls = Pull.objects.filter(run=run)
    assert run.pulls_done == pulls.count() == SEARCH_BUDGET
    assert restore_policy(run).stats.n_scored == SEARCH_BUDGET
    slots = Counter(pulls.values_list("round_index", "slot"))
    assert max(slots.values()) == 1  # no (round, slot) twice
    assert sorted({r for r, _ in slots}) == list(range(run.round_index))
    assert_paid_once(run.scope)


def _start_breaker_run(server: FakeOpenAI, folder: Path) -> BreakerRun:
    server.responder, server.latency = breaker_reply, 0.3
    remote_engines(server.base_url)
    return start_breaker_run(remote_config("breaker_seeded_qe", n_steps=5))


def breaker_mid_round(row: BreakerRun, server: FakeOpenAI) -> bool:
    last = server.requests[-1].body["model"] if server.requests else ""
    in_qe = last == "model-qe" and server.in_flight > 0
    return row.round_index >= 2 and bool(row.claimed_by) and in_qe


def check_breaker_run(run: BreakerRun) -> None:
    assert_finished(run)
    steps = BreakerStep.objects.filter(chain__run=run)
    assert run.steps_done == steps.count() == run.steps_total == 3 * 6
    assert max(Counter(steps.values_list("chain_id", "index")).values()) == 1
    assert all(c.steps_done == 6 and c.status == "done" for c in run.chains.all())
    assert_paid_once(run.scope)


# --- Breaker statistics and transfers, on a finished offline run -------------------------------

ANALYSIS = {
    "grammaticality": 90, "naturalness": 70, "word rarity": 20, "syntax complexity": 40,
    "topics": ["daily life"], "error modes": ["idioms"],
}  # fmt: skip


def _finished_offline_run() -> BreakerRun:
    return run_breaker(start_breaker_run(offline_config(n_steps=3), enqueue=False).pk)


def _start_statistics(server: FakeOpenAI, folder: Path) -> BreakerStatistics:
    server.latency = 0.5
    server.responder = lambda body: Reply(json.dumps(ANALYSIS), tokens_in=10, tokens_out=5)
    EngineFactory(name="analyst", base_url=server.base_url, max_concurrency=1)
    EngineFactory(name="emb", kind="openai_embeddings", capabilities=["embed"],
                  base_url=server.base_url, params={})  # fmt: skip
    return start_statistics(_finished_offline_run(), embedder="emb", analyst="analyst")


def check_statistics(stats: BreakerStatistics) -> None:
    assert_finished(stats, "done")
    assert stats.values["analysed"] == stats.values["texts"] == 6
    assert_paid_once(stats.scope)


def _start_transfer(server: FakeOpenAI, folder: Path) -> BreakerTransfer:
    server.responder, server.latency = auto_reply, 0.3
    for name in ("mt", "qe"):
        EngineFactory(name=name, model=f"model-{name}", base_url=server.base_url)
    run = _finished_offline_run()
    config = {"name": "Fault", "runs": [run.pk], "translators": ["mt"],
              "languages": ["cs", "de"], "qe": ["qe"]}  # fmt: skip
    return start_transfer(config)


def check_transfer(transfer: BreakerTransfer) -> None:
    assert_finished(transfer)
    results = TransferResult.objects.filter(transfer=transfer)
    assert transfer.items_done == transfer.items_total == results.count() == 12
    assert not results.exclude(error="").exists()
    assert_paid_once(transfer.scope)


# --- DEC evaluations, imports and topic trees (rounds without a number) ------------------------


def _start_dec_evaluation(server: FakeOpenAI, folder: Path) -> DifficultyEvaluation:
    server.latency = 0.5
    EngineFactory(name="judge", base_url=server.base_url, max_concurrency=2)
    lines = [
        json.dumps({"langs": "en-de", "line_id": i, "src": f"text {i} " + "word " * (i % 9),
                    "scores": {"a": float(90 - 5 * (i % 9)), "b": float(80 - 3 * (i % 7))}})
        for i in range(40)
    ]  # fmt: skip
    dataset = difficulty_services.import_difficulty_dataset(lines, name="faults")
    return difficulty_services.start_difficulty_evaluation(
        dataset, ["llm-judge:judge", "length"], n_bootstrap=20
    )


def check_dec_evaluation(evaluation: DifficultyEvaluation) -> None:
    assert_finished(evaluation, "done")
    assert evaluation.progress_done == evaluation.progress_total
    assert evaluation.results["estimators"]["llm-judge:judge"]["dec"] is not None
    scope = f"dataset_eval:{evaluation.pk}"
    assert_paid_once(scope)
    judged = EngineCall.objects.filter(scope=scope, cache_hit=False, error="")
    assert judged.count() == 40  # each distinct source judged once


IMPORT_LINES = 12_000


def _start_import(server: FakeOpenAI, folder: Path) -> ImportJob:
    options = dataset_options(
        name="faults", description="", reference_rule=ReferenceRule(), perfect_score=100.0,
        source_file_name="big.jsonl",
    )  # fmt: skip
    return import_services.start_import(DATASET_KIND, upload(dataset_lines(IMPORT_LINES)), options)


def import_mid_round(row: ImportJob, server: FakeOpenAI) -> bool:
    return bool(row.claimed_by) and row.lines_done > 0


def check_import(job: ImportJob) -> None:
    assert_finished(job, "done")
    assert (job.lines_done, job.attempts) == (IMPORT_LINES, 1)  # a lost database is no death
    (imported,) = DifficultyDataset.objects.all()  # written once
    lines = dataset_lines(IMPORT_LINES)
    again = difficulty_services.import_difficulty_dataset(
        lines, name="again", source_file_name="big.jsonl"
    )
    assert snapshot(imported) == snapshot(again)


def _tree_answer(body: dict) -> Reply:
    root = body["messages"][-1]["content"].split("for the domain '")[1].split("'")[0]
    return Reply(json.dumps({root: {f"{root} one": {}, f"{root} two": {}}}))


ROOTS = ["Law", "Cooking", "Sport", "Music"]


def _start_tree_generation(server: FakeOpenAI, folder: Path) -> TopicTree:
    server.responder, server.latency = _tree_answer, 2.0
    EngineFactory(name="gen", base_url=server.base_url, max_concurrency=1)
    return start_tree_generation("Faults", "gen", roots=ROOTS, depth=2, branching=2)


def check_tree(tree: TopicTree) -> None:
    assert_finished(tree, "ready")
    assert (tree.n_topics, tree.n_leaves, tree.topics.count()) == (12, 8, 12)
    assert_paid_once(f"topic_tree:{tree.pk}")


# --- Lexical selection (seed 004) -------------------------------------------------------------


def _start_mining(server: FakeOpenAI, folder: Path) -> MiningJob:
    return start_mining(synthetic_corpus(), {"chunk_size": 650})  # four rounds a pass


def mining_mid_round(row: MiningJob, server: FakeOpenAI) -> bool:
    return bool(row.claimed_by) and row.round_index >= 1


def check_mining(job: MiningJob) -> None:
    assert_finished(job)
    assert job.items_done == job.items_total == 5000
    mined = {c.lemma: {v.lemma: v.count for v in c.variations.all()} for c in job.concepts.all()}
    assert mined == expected_concepts() and job.concepts.count() == len(mined)


def _rule_answer(body: dict) -> Reply:
    """Rules keyed by the labels the prompt's system message lists."""
    system = body["messages"][0]["content"]
    labels = json.loads(system.split("written as given: ")[1].split(". The value")[0])
    return Reply(json.dumps({label: f"rule for {label}" for label in labels}))


def _start_rule_job(server: FakeOpenAI, folder: Path) -> RuleJob:
    server.responder, server.latency = _rule_answer, 0.5
    mining = make_mining_job()
    remote_engine(server.base_url)
    (job,) = start_rule_jobs({"engines": ["remote"], "mining_job": mining.pk})
    return job


def check_rule_job(job: RuleJob) -> None:
    assert_finished(job)
    assert job.items_done == 2 and job.concepts_failed == 0
    rules = Rule.objects.filter(job=job)
    assert rules.count() == 5
    assert max(Counter(rules.values_list("variation_id", flat=True)).values()) == 1
    assert_paid_once(job.scope)


def _start_lexical_evaluation(server: FakeOpenAI, folder: Path) -> LexicalEvaluation:
    server.responder, server.latency = scripted, 0.3
    make_engines(server.base_url, "oracle", "mt")
    return start_lexical_evaluation(
        {"selection": make_selection().pk, "entries": ["oracle:none", "mt:translate"], "runs": 2}
    )


def check_lexical_evaluation(evaluation: LexicalEvaluation) -> None:
    assert_finished(evaluation)
    answers = LexicalAnswer.objects.filter(evaluation=evaluation)
    assert evaluation.items_done == evaluation.items_total == answers.count() == 2 * 5 + 5
    assert answers.filter(correct=True).count() == 10 + 3
    assert_paid_once(evaluation.scope)


# --- Rankings, discrimination analyses and replays -------------------------------------------

RANKED_SYSTEMS, RANKED_ITEMS = 3, 60


def _start_ranking(server: FakeOpenAI, folder: Path) -> SystemRanking:
    """A version scored by a QE engine: its 180 translations in rounds of 64 (QE_CHUNK)."""
    server.responder, server.latency = auto_reply, 0.3
    EngineFactory(name="qe", model="model-qe", base_url=server.base_url)
    scores = {f"mt-{k}": [50.0 + k] * RANKED_ITEMS for k in range(RANKED_SYSTEMS)}
    version = make_version(version_items(scores))
    return start_ranking(input_kind="version_qe", version=version, score="qe")


def check_ranking(ranking: SystemRanking) -> None:
    assert_finished(ranking, "done")
    cells = RANKED_SYSTEMS * RANKED_ITEMS
    assert ranking.cells_done == ranking.cells_total == cells
    assert len(ranking.result["ranking"]["systems"]) == RANKED_SYSTEMS
    assert_paid_once(ranking.scope)
    scored = EngineCall.objects.filter(scope=ranking.scope, cache_hit=False, error="")
    assert scored.count() == cells  # each translation scored (and paid) once


def _start_analysis(server: FakeOpenAI, folder: Path) -> DiscriminationAnalysis:
    """No engine: rounds of permutation tests over random subsets, a few seconds each."""
    return start_analysis(
        subject_kind="hardest", dataset=tiered_dataset(), estimator="oracle",
        fractions=[0.25, 0.5, 0.75], n_random=30, n_resamples=3000,
    )  # fmt: skip


def analysis_mid_round(row: DiscriminationAnalysis, server: FakeOpenAI) -> bool:
    return bool(row.claimed_by) and row.round_index >= 1


def check_analysis(analysis: DiscriminationAnalysis) -> None:
    assert_finished(analysis, "done")
    assert analysis.points_done == analysis.points_total == 4  # the full set and three sizes
    (subset,) = analysis.result["subsets"]
    assert [point["size"] for point in subset["points"]] == [15, 30, 45]  # each point once


REPLAY_POLICIES, REPLAY_SEEDS = ["uniform", "settle"], 24


def _start_replay(server: FakeOpenAI, folder: Path) -> ReplayRun:
    """No engine: rounds of replays (24 policy × seed runs each), a few seconds each."""
    return start_replay(
        dataset=tiered_dataset(), policies=REPLAY_POLICIES, n_seeds=REPLAY_SEEDS,
        n_checkpoints=10, batch_size=15, n_resamples=200,
    )  # fmt: skip


def check_replay(run: ReplayRun) -> None:
    assert_finished(run)
    assert run.items_done == run.items_total == len(REPLAY_POLICIES) * REPLAY_SEEDS
    runs = Counter((trace["policy"], trace["seed"]) for trace in run.state["traces"])
    assert len(runs) == run.items_total and set(runs.values()) == {1}  # each run once
    assert set(run.result["curves"]) == set(REPLAY_POLICIES)


# ------------------------------------------------------------------------------------------------

KINDS = [
    FaultKind("search-run", _start_search_run, search_mid_round, check_search_run),
    FaultKind("breaker-run", _start_breaker_run, breaker_mid_round, check_breaker_run),
    FaultKind("breaker-statistics", _start_statistics, engines_at_work, check_statistics),
    FaultKind("breaker-transfer", _start_transfer, engines_at_work, check_transfer),
    FaultKind("dec-evaluation", _start_dec_evaluation, engines_at_work, check_dec_evaluation),
    FaultKind(
        "import",
        _start_import,
        import_mid_round,
        check_import,
        worker_env=lambda folder: {"HARDSET_VAR_DIR": str(folder)},
    ),
    FaultKind("topic-tree-generation", _start_tree_generation, engines_at_work, check_tree),
    FaultKind("lexical-mining", _start_mining, mining_mid_round, check_mining),
    FaultKind(
        "lexical-rule-job",
        _start_rule_job,
        engines_at_work,
        check_rule_job,
        worker_env=lambda folder: {"LEXICAL_RULES_ROUND_CONCEPTS": "1"},
    ),
    FaultKind(
        "lexical-evaluation",
        _start_lexical_evaluation,
        engines_at_work,
        check_lexical_evaluation,
        worker_env=lambda folder: {"LEXICAL_EVAL_ROUND_ITEMS": "4"},
    ),
    FaultKind("ranking", _start_ranking, engines_at_work, check_ranking),
    FaultKind("discrimination-analysis", _start_analysis, analysis_mid_round, check_analysis),
    FaultKind("replay", _start_replay, analysis_mid_round, check_replay),
]
KIND_NAMES = [kind.name for kind in KINDS]
