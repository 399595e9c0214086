"""DEC and hardest-subset evaluations on the real WMT24 en-cs ESA file, checked by hand."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
import wordfreq
from django.core.management import CommandError, call_command
from django.db import OperationalError
from django.utils import timezone
from scipy import stats

from difficulty import services
from difficulty.models import DifficultyDataset, DifficultyEstimate, DifficultyEvaluation
from difficulty.services import evaluation_significance, evaluations
from engines import heuristics
from tests.rounds.database_outage import end_this_connection, postgres_only, reconnect

pytestmark = pytest.mark.django_db

WMT_FILE = "wmt24_esa_en-cs.jsonl"
ESTIMATOR_KEYS = {"rank", "dec", "dec_per_lp", "pearson", "avg_score", "pct_perfect"}


@pytest.fixture
def wmt_rows(shared_data) -> list[dict]:
    text = (shared_data / WMT_FILE).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture
def wmt(shared_data) -> DifficultyDataset:
    with (shared_data / WMT_FILE).open("rb") as lines:
        return services.import_difficulty_dataset(lines, name="wmt24", source_file_name=WMT_FILE)


def evaluate(dataset, names, **options) -> dict:
    options.setdefault("n_bootstrap", 0)
    evaluation = services.start_difficulty_evaluation(dataset, names, enqueue=False, **options)
    evaluation = services.run_difficulty_evaluation(evaluation.pk)
    assert evaluation.status == DifficultyEvaluation.Status.DONE, evaluation.error
    return evaluation.results


# --- An independent hand computation with scipy, straight from the file ----------------------


def hand_dec(rows: list[dict], estimate: list[float]) -> tuple[float, float]:
    """Seed 002 Eq. 1 on one language pair: mean over MT systems of tau_b (and Pearson).

    A system whose scores are all equal has no tau_b; like the platform, leave it out.
    """
    systems = sorted(s for s in rows[0]["scores"] if s != "refA")
    taus, rs = [], []
    for system in systems:
        human = [row["scores"][system] for row in rows]
        if len(set(human)) == 1:
            continue
        taus.append(stats.kendalltau(estimate, human, variant="b").statistic)
        rs.append(stats.pearsonr(estimate, human).statistic)
    return float(np.mean(taus)), float(np.mean(rs))


def hand_subset(rows: list[dict], estimate: list[float], fraction: float = 0.25):
    """Seed 002 Eq. 3–4: the B lowest-scored segments (ties in file order), all MT systems."""
    systems = [s for s in rows[0]["scores"] if s != "refA"]
    budget = math.floor(fraction * len(rows) + 0.5)
    chosen = sorted(range(len(rows)), key=lambda i: (estimate[i], i))[:budget]
    cells = [rows[i]["scores"][s] for i in chosen for s in systems]
    return sum(cells) / len(cells), 100.0 * sum(c == 100 for c in cells) / len(cells)


def test_results_equal_a_hand_computation_with_scipy(wmt, wmt_rows, capsys):
    call_command(
        "evaluate_difficulty",
        "--dataset",
        "wmt24",
        "--estimator",
        "length",
        "--estimator",
        "chars",
        "--estimator",
        "rarity",
        "--estimator",
        "oracle-src",
        "--estimator",
        "oracle-src-lang",
        "--bootstrap",
        "50",
        "--json",
    )
    results = json.loads(capsys.readouterr().out)

    sources = [row["src"] for row in wmt_rows]
    by_hand = {
        "length": [-len(wordfreq.tokenize(s, "en")) for s in sources],
        "chars": [-len(s) for s in sources],
        "rarity": [
            np.mean([wordfreq.word_frequency(t, "en") for t in wordfreq.tokenize(s, "en")])
            for s in sources
        ],
        # Mean over MT systems of the segment; oracle-src also pools segments with the same
        # source text (the file has "@user44" twice).
        "oracle-src-lang": [
            np.mean([v for k, v in row["scores"].items() if k != "refA"]) for row in wmt_rows
        ],
        "oracle-src": [
            np.mean(
                [
                    v
                    for other in wmt_rows
                    if other["src"] == row["src"]
                    for k, v in other["scores"].items()
                    if k != "refA"
                ]
            )
            for row in wmt_rows
        ],
    }
    assert set(results) >= {"estimators", "dataset"}
    for name, estimate in by_hand.items():
        got = results["estimators"][name]
        assert set(got) == ESTIMATOR_KEYS
        tau, r = hand_dec(wmt_rows, estimate)
        avg, pct = hand_subset(wmt_rows, estimate)
        assert got["dec"] == pytest.approx(tau, abs=1e-12), name
        assert got["dec_per_lp"] == {"en-cs": pytest.approx(tau, abs=1e-12)}
        assert got["pearson"] == pytest.approx(r, abs=1e-9), name
        assert got["avg_score"] == pytest.approx(avg, abs=1e-9), name
        assert got["pct_perfect"] == pytest.approx(pct, abs=1e-9), name
        low, high = results["details"][name]["dec_ci"]
        assert low < got["dec"] < high
    assert results["dataset"]["name"] == "wmt24"
    assert results["dataset"]["language_pairs"]["en-cs"]["n_segments"] == 297
    assert "refA" not in results["dataset"]["language_pairs"]["en-cs"]["systems"]
    assert len(results["dataset"]["language_pairs"]["en-cs"]["systems"]) == 15


def test_length_is_positive_and_the_oracle_beats_every_heuristic(wmt):
    results = evaluate(wmt, ["length", "chars", "rarity", "oracle-src", "oracle-src-lang"])

    dec = {name: r["dec"] for name, r in results["estimators"].items()}
    assert dec["length"] > 0.1
    assert dec["chars"] > 0.1
    assert dec["rarity"] < 0  # seed 002 Table 1: word rarity, as defined, correlates negatively
    for heuristic in ("length", "chars", "rarity"):
        assert dec["oracle-src"] > dec[heuristic]
        assert dec["oracle-src-lang"] > dec[heuristic]
        oracle_avg = results["estimators"]["oracle-src"]["avg_score"]
        assert oracle_avg < results["estimators"][heuristic]["avg_score"]
    # Selecting by length gives a harder subset than random selection.
    assert results["estimators"]["length"]["avg_score"] < results["random_selection"]["avg_score"]
    # Seed 002 Table 7's ranks: clusters of significance by PERM-BOTH, stored with the results.
    clusters = results["significance"]
    assert (clusters["method"], clusters["n_resamples"], clusters["alpha"]) == (
        "PERM-BOTH",
        1000,
        0.05,
    )
    assert clusters["order"] == ["oracle-src-lang", "oracle-src", "length", "chars", "rarity"]
    assert clusters["dec"] == [dec[name] for name in clusters["order"]]
    # The two oracles differ only on the source that occurs twice: no significant difference.
    assert clusters["ranks"] == [1, 1, 2, 3, 4]
    assert clusters["p_values"][0][1] > 0.05
    assert clusters["p_values"][0][2:] == [0.0, 0.0, 0.0]
    assert [row[: i + 1] for i, row in enumerate(clusters["p_values"])] == [
        [None] * (i + 1) for i in range(5)
    ]
    assert clusters["resamples_used"][0][1] == 1000  # undecided: every resample was drawn
    assert clusters["resamples_used"][2][3] == 200  # decided after the first block
    assert clusters["per_lp"]["en-cs"]["ranks"] == clusters["ranks"]
    ranks = {name: r["rank"] for name, r in results["estimators"].items()}
    assert ranks == dict(zip(clusters["order"], clusters["ranks"], strict=True))


def test_random_averages_zero_over_many_seeds(wmt):
    values = [
        evaluate(wmt, ["random"], seed=seed)["estimators"]["random"]["dec"] for seed in range(20)
    ]

    assert abs(np.mean(values)) < 0.01
    assert max(abs(v) for v in values) < 0.06
    assert len(set(values)) == 20  # drawn afresh per seed
    assert evaluate(wmt, ["random"], seed=3)["estimators"]["random"]["dec"] == values[3]


def test_human_references_can_be_included(wmt, wmt_rows):
    results = evaluate(wmt, ["length"], include_references=True)

    estimate = [-len(wordfreq.tokenize(row["src"], "en")) for row in wmt_rows]
    systems = sorted(wmt_rows[0]["scores"])
    taus = [
        stats.kendalltau(estimate, [row["scores"][s] for row in wmt_rows]).statistic
        for s in systems
    ]
    assert results["estimators"]["length"]["dec"] == pytest.approx(np.mean(taus), abs=1e-12)
    assert len(results["dataset"]["language_pairs"]["en-cs"]["systems"]) == 16
    assert results["significance"] is None  # one estimator: nothing to compare
    assert results["estimators"]["length"]["rank"] is None


def test_the_text_report_has_both_tables(wmt, capsys):
    call_command(
        "evaluate_difficulty",
        "--dataset=wmt24",
        "--estimator=length",
        "--estimator=random",
        "--estimator=oracle-src",
        "--bootstrap=20",
        "--subset=0.1",
    )
    out = capsys.readouterr().out

    assert "Difficulty estimation correlation (DEC, seed 002 Eq. 1)" in out
    assert "Hardest 10% of segments per language pair" in out
    table = out.splitlines()
    rows = {line.split()[1]: line for line in table if line.startswith(("Oracle", "Heuristic"))}
    assert set(rows) >= {"oracle-src", "length"}
    # Seed 002 Table 7's order and ranks: the oracle, then length, then random, all apart.
    header = next(line for line in table if line.startswith("Group"))
    assert header.split()[-2:] == ["en-cs", "Rank"]
    dec_rows = [
        line.split() for line in table if line.startswith(("Oracle", "Heuristic", "Random"))
    ]
    assert [(row[1], row[-1]) for row in dec_rows[:3]] == [
        ("oracle-src", "1"),
        ("length", "2"),
        ("random", "3"),
    ]
    assert "Rank: clusters of significance (PERM-BOTH test of every two estimators" in out
    assert any(line.startswith("Random selection") for line in table)
    assert any(line.startswith("Full set") for line in table)
    assert DifficultyEvaluation.objects.filter(status="done").count() == 1


def test_bootstrap_interval_is_reproducible(wmt):
    first = evaluate(wmt, ["length"], n_bootstrap=60, seed=5)["details"]["length"]["dec_ci"]
    again = evaluate(wmt, ["length"], n_bootstrap=60, seed=5)["details"]["length"]["dec_ci"]

    assert first == again
    assert first[0] < first[1]


# --- Dataset metrics, errors ---------------------------------------------------------------


@pytest.fixture
def small(tmp_path) -> DifficultyDataset:
    rows = []
    rng = np.random.default_rng(4)
    for i in range(30):
        human = {s: float(rng.integers(0, 101)) for s in ("a", "b", "c")}
        rows.append(
            {
                "langs": "en-de",
                "line_id": i,
                "src": f"sentence number {i} " + "word " * (i % 7),
                "scores": human,
                "qe": {s: v + float(rng.normal(0, 20)) for s, v in human.items()},
                "hardness": float(-np.mean(list(human.values())) + rng.normal(0, 5)),
                "note": "text",
            }
        )
    path = tmp_path / "small.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    with path.open("rb") as lines:
        dataset = services.import_difficulty_dataset(lines, name="small")
    dataset.rows = rows
    return dataset


def test_metric_fields_per_segment_and_per_system(small):
    results = evaluate(small, ["metric:qe", "metric:-hardness", "metric:hardness"])

    rows = small.rows
    qe_taus = [
        stats.kendalltau([r["qe"][s] for r in rows], [r["scores"][s] for r in rows]).statistic
        for s in ("a", "b", "c")
    ]
    hard_taus = [
        stats.kendalltau([-r["hardness"] for r in rows], [r["scores"][s] for r in rows]).statistic
        for s in ("a", "b", "c")
    ]
    assert results["estimators"]["metric:qe"]["dec"] == pytest.approx(np.mean(qe_taus))
    assert results["estimators"]["metric:-hardness"]["dec"] == pytest.approx(np.mean(hard_taus))
    assert results["estimators"]["metric:hardness"]["dec"] == pytest.approx(-np.mean(hard_taus))


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["nonsense"], "unknown estimator 'nonsense'"),
        (["metric:missing"], "the dataset has no extra field 'missing'"),
        (["length", "length"], "an estimator is listed twice"),
        ([], "choose at least one estimator"),
        (["llm-judge:nobody"], "there is no engine named 'nobody'"),
    ],
)
def test_bad_estimators_are_refused_before_anything_runs(small, names, message):
    with pytest.raises(services.DifficultyDatasetError, match=message):
        services.start_difficulty_evaluation(small, names, enqueue=False)

    assert not DifficultyEvaluation.objects.exists()


def test_syntax_is_reported_unavailable_without_a_parser(small):
    if heuristics.syntax_available("en"):
        pytest.skip("a spaCy parser for English is installed here")

    with pytest.raises(services.DifficultyDatasetError) as error:
        services.start_difficulty_evaluation(small, ["length", "syntax"], enqueue=False)

    assert "estimator 'syntax' is unavailable here" in str(error.value)
    assert "source language(s) en" in str(error.value)


def test_command_errors(small):
    with pytest.raises(CommandError, match="no difficulty dataset named 'nope'"):
        call_command("evaluate_difficulty", "--dataset=nope", "--estimator=length")
    with pytest.raises(CommandError, match="unknown estimator"):
        call_command("evaluate_difficulty", "--dataset=small", "--estimator=bogus")


def test_the_foreground_command_runs_a_queued_evaluation_and_refuses_a_failed_one(small):
    queued = services.start_difficulty_evaluation(small, ["length"], enqueue=False)
    out = io.StringIO()

    call_command("run_difficulty_evaluation", str(queued.pk), stdout=out)

    queued.refresh_from_db()
    assert queued.status == DifficultyEvaluation.Status.DONE
    assert out.getvalue() == f"Evaluation {queued.pk} is done.\n"
    with pytest.raises(CommandError) as missing:
        call_command("run_difficulty_evaluation", str(queued.pk + 1))
    assert str(missing.value) == f"there is no difficulty evaluation {queued.pk + 1}"
    bad = services.start_difficulty_evaluation(small, ["metric:note"], enqueue=False)
    with pytest.raises(CommandError) as failed:
        call_command("run_difficulty_evaluation", str(bad.pk))
    assert str(failed.value) == (
        f"evaluation {bad.pk} is failed: metric:note: line 1 has 'text' in 'note'; a number is "
        "needed"
    )


def test_a_non_numeric_metric_value_fails_the_evaluation_with_its_line(small):
    evaluation = services.start_difficulty_evaluation(small, ["metric:note"], enqueue=False)

    evaluation = services.run_difficulty_evaluation(evaluation.pk)

    assert evaluation.status == DifficultyEvaluation.Status.FAILED
    assert evaluation.error == "metric:note: line 1 has 'text' in 'note'; a number is needed"


def test_clusters_do_not_depend_on_the_order_of_the_estimators(small):
    names = ["length", "metric:-hardness", "random"]

    first = evaluate(small, names)["significance"]
    again = evaluate(small, names[::-1])["significance"]

    assert first == again
    assert first["order"][0] == "metric:-hardness"


def test_clusters_are_left_out_where_the_tests_would_take_too_long(small, monkeypatch):
    monkeypatch.setattr(evaluation_significance, "SIGNIFICANCE_MAX_WORK", 30 * 30 * 3 - 1)

    evaluation = services.start_difficulty_evaluation(small, ["length", "random"], enqueue=False)
    results = services.run_difficulty_evaluation(evaluation.pk).results

    assert all(unit[0] != "significance" for unit in evaluation.state["plan"])
    assert results["significance"] == {
        "method": "PERM-BOTH",
        "skipped": "significance clusters left out: 1 permutation test on this dataset would "
        "take too long (2,700 cell pairs per resample; at most 2,699)",
    }
    assert results["estimators"]["length"]["rank"] is None


# --- Rounds, leases, cancellation ----------------------------------------------------------


def test_short_rounds_give_the_same_results_as_one_long_run(small):
    whole = evaluate(small, ["length", "random"], n_bootstrap=30, seed=1)
    evaluation = services.start_difficulty_evaluation(
        small, ["length", "random"], n_bootstrap=30, seed=1, enqueue=False
    )

    rounds = 0
    while True:
        outcome = services.advance_difficulty_evaluation(evaluation.pk, worker="w", budget_s=0)
        rounds += 1
        evaluation.refresh_from_db()
        if outcome.status != "more":
            break
        assert evaluation.progress_done == rounds  # one unit per round with no time budget
        assert evaluation.claimed_by == "" and evaluation.lease_expires_at is None

    assert outcome.status == "done"
    assert rounds == evaluation.progress_total
    assert evaluation.results == whole


def test_a_held_lease_makes_a_round_wait_until_it_runs_out(small):
    evaluation = services.start_difficulty_evaluation(small, ["length"], enqueue=False)
    DifficultyEvaluation.objects.filter(pk=evaluation.pk).update(
        status="running",
        claimed_by="dead-worker",
        lease_expires_at=timezone.now() + timezone.timedelta(seconds=120),
    )

    outcome = services.advance_difficulty_evaluation(evaluation.pk, worker="w2")

    assert outcome.status == "busy"
    assert 100 < outcome.retry_in <= 122
    # The dead worker's lease runs out: the next round takes over and finishes.
    DifficultyEvaluation.objects.filter(pk=evaluation.pk).update(
        lease_expires_at=timezone.now() - timezone.timedelta(seconds=1)
    )
    assert services.advance_difficulty_evaluation(evaluation.pk, worker="w2").status == "done"
    assert services.advance_difficulty_evaluation(evaluation.pk, worker="w3").status == "stale"


def test_a_cancelled_evaluation_stops(small):
    evaluation = services.start_difficulty_evaluation(
        small, ["length", "random"], n_bootstrap=20, enqueue=False
    )
    services.advance_difficulty_evaluation(evaluation.pk, worker="w", budget_s=0)

    assert services.cancel_difficulty_evaluation(evaluation)
    outcome = services.advance_difficulty_evaluation(evaluation.pk, worker="w")

    evaluation.refresh_from_db()
    assert outcome.status == "stale"
    assert evaluation.status == DifficultyEvaluation.Status.CANCELLED
    assert evaluation.progress_done == 1
    assert evaluation.results == {}
    assert not services.cancel_difficulty_evaluation(evaluation)


# --- Engine estimators through engines.registry (a real HTTP server on 127.0.0.1) -----------


def test_llm_judge_through_a_local_openai_compatible_server(tmp_path, wmt_rows):
    from tests.engines.factories import EngineFactory
    from tests.engines.fake_openai import FakeOpenAI, Reply

    rows = wmt_rows[:40]
    proficiency = {row["src"]: float((7 * i) % 121) for i, row in enumerate(rows)}

    def judge(body: dict) -> Reply:
        prompt = body["messages"][-1]["content"]
        (level,) = [p for src, p in proficiency.items() if src in prompt]
        return Reply.judge(int(level))

    path = tmp_path / "forty.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    with path.open("rb") as lines:
        dataset = services.import_difficulty_dataset(lines, name="forty")

    with FakeOpenAI(judge) as server:
        EngineFactory(name="judge", base_url=server.base_url)
        first = services.start_difficulty_evaluation(dataset, ["llm-judge:judge"], enqueue=False)
        results = services.run_difficulty_evaluation(first.pk).results
        requests_after_first = len(server.requests)
        second = services.start_difficulty_evaluation(dataset, ["llm-judge:judge"], enqueue=False)
        again = services.run_difficulty_evaluation(second.pk).results

    quality = [100.0 * (1 - proficiency[row["src"]] / 120.0) for row in rows]
    tau, _r = hand_dec(rows, quality)
    assert results["estimators"]["llm-judge:judge"]["dec"] == pytest.approx(tau, abs=1e-9)
    assert requests_after_first == len(set(proficiency))  # one call per distinct source
    assert len(server.requests) == requests_after_first  # the second run came from the cache
    assert again["estimators"] == results["estimators"]
    # Called in chunks of distinct sources: 40 sources, chunks of 32.
    offsets = DifficultyEstimate.objects.filter(evaluation=first).values_list("offset", flat=True)
    assert sorted(offsets) == [0, 32]
    from engines.selectors import cost_by_scope

    assert cost_by_scope(f"dataset_eval:{first.pk}")["calls"] == 40
    assert Path(path).exists()


def test_artificial_crowd_through_a_local_openai_compatible_server(tmp_path, wmt_rows):
    from engines.models import Engine
    from tests.engines.factories import EngineFactory
    from tests.engines.fake_openai import FakeOpenAI

    rows = wmt_rows[:12]
    path = tmp_path / "twelve.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    with path.open("rb") as lines:
        dataset = services.import_difficulty_dataset(lines, name="twelve")

    with FakeOpenAI() as server:
        EngineFactory(name="mt", base_url=server.base_url)
        EngineFactory(name="qe", base_url=server.base_url)
        Engine.objects.create(
            name="crowd",
            kind="artificial_crowd",
            capabilities=["difficulty"],
            params={"translators": ["mt"], "quality_estimators": ["qe"]},
        )
        evaluation = services.start_difficulty_evaluation(dataset, ["crowd:crowd"], enqueue=False)
        results = services.run_difficulty_evaluation(evaluation.pk).results

    # The test server translates x as "[xx] x" and scores a translation 40 + len % 61.
    quality = [40 + len(f"[xx] {row['src']}") % 61 for row in rows]
    tau, _r = hand_dec(rows, quality)
    assert results["estimators"]["crowd:crowd"]["dec"] == pytest.approx(tau, abs=1e-9)
    with pytest.raises(services.DifficultyDatasetError, match="needs an engine of kind"):
        services.start_difficulty_evaluation(dataset, ["llm-judge:crowd"], enqueue=False)


def test_the_hardest_subset_lists_its_segments(small, admin_client):
    results = evaluate(small, ["length"])

    # length: the longest sources (9 tokens: i % 7 == 6, then 8 tokens: i % 7 == 5) in file order
    rows = [6, 13, 20, 27, 5, 12, 19, 26]
    assert results["details"]["length"]["subset_rows"] == {"en-de": rows}
    evaluation = DifficultyEvaluation.objects.get()
    page = admin_client.get(f"/difficulty/evaluations/{evaluation.pk}/").content.decode()
    assert "Hardest segments, en-de" in page
    for rank, row in enumerate(rows, start=1):
        source = small.rows[row]["src"]
        mean = np.mean(list(small.rows[row]["scores"].values()))
        assert (
            f'<tr><td class="num">{rank}</td><td></td><td>{row}</td><td dir="auto">{source}</td>'
            f'<td class="num">{mean:.1f}</td></tr>'
        ) in page


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_round_whose_database_went_away_leaves_the_evaluation_to_run_again(small, monkeypatch):
    whole = evaluate(small, ["length", "random"], n_bootstrap=20, seed=3)
    evaluation = services.start_difficulty_evaluation(
        small, ["length", "random"], n_bootstrap=20, seed=3, enqueue=False
    )
    execute = evaluations._Run.execute
    ran: list[list] = []

    def cut_after_the_first_unit(run, unit):
        ran.append(unit)
        if len(ran) == 2:
            end_this_connection()  # the unit's result is recorded on a connection that is gone
        return execute(run, unit)

    monkeypatch.setattr(evaluations._Run, "execute", cut_after_the_first_unit)
    with pytest.raises(OperationalError):
        services.advance_difficulty_evaluation(evaluation.pk, worker="w")

    reconnect()
    evaluation.refresh_from_db()
    assert evaluation.status == "running" and evaluation.error == ""
    assert evaluation.progress_done == 1  # the first unit's record committed, the second's not
    outcome = services.advance_difficulty_evaluation(evaluation.pk, worker="w")  # the retry
    evaluation.refresh_from_db()
    assert outcome.status == "done"
    assert evaluation.results == whole
