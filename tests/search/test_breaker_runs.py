"""MT-breaker runs on the offline world (a simulation), in the foreground: every method,
Multi, selection, curves, controls, budget and the round chain through the kernel."""

from __future__ import annotations

from statistics import mean

import pytest

from search.breaker.config import BreakerConfigError
from search.breaker.methods import METHODS
from search.breaker.services import (
    ADVANCE_TASK,
    RunStateError,
    advance_run,
    cancel_run,
    pause_run,
    resume_run,
    run_in_foreground,
    start_breaker_comparison,
    start_breaker_run,
)
from search.models import BreakerChain, BreakerRun, BreakerStep
from tests.search.breaker_helpers import SEED_TEXTS, offline_config

pytestmark = pytest.mark.django_db


def _selected(run: BreakerRun) -> float:
    return mean(run.chains.values_list("selected_quality", flat=True))


def test_seeded_mt_breaker_follows_algorithm_1_and_drives_quality_down():
    run = start_breaker_run(offline_config("breaker_seeded", n_steps=6), enqueue=False)
    assert run.steps_total == len(SEED_TEXTS) * 7 and run.target_words == 13
    run = run_in_foreground(run.pk)
    assert run.status == "finished", run.error
    assert run.steps_done == run.steps_total == BreakerStep.objects.count()
    assert run.round_index == 7  # one step of every chain per round
    for chain in run.chains.all():
        steps = list(chain.steps.order_by("index"))
        assert chain.status == "done" and [s.index for s in steps] == list(range(7))
        assert steps[0].source == chain.seed_text and steps[0].llm_text == ""  # step 0 = seed
        qualities = [s.quality for s in steps]
        assert chain.selected_step == qualities.index(min(qualities))  # earliest minimum
        assert chain.selected_text == steps[chain.selected_step].source
        assert all(s.edit_share is not None and 0 < s.edit_share <= 0.75 for s in steps[1:])
        assert all(s.parse_attempts == 1 for s in steps[1:])
        assert set(steps[1].qe) == {"sim-fragile-mt"} and set(steps[1].qe["sim-fragile-mt"]) == {
            "sim-qe"
        }
    curves = run.curves
    assert [row["step"] for row in curves] == list(range(7))
    assert curves[-1]["mean"] < curves[0]["mean"] - 10  # visibly down step by step
    assert curves[-1]["running_min"] == pytest.approx(_selected(run))


def test_every_method_runs_and_mt_breaker_beats_the_zero_shot_baselines():
    runs = start_breaker_comparison(
        {**offline_config(), "methods": list(METHODS), "name": "All", "n_steps": 5,
         "k_generations": 5, "history_batch": 2},
        enqueue=False,
    )  # fmt: skip
    assert len(runs) == 8 and {r.comparison for r in runs} == {"All"}
    by_method = {}
    for run in runs:
        run = run_in_foreground(run.pk)
        assert run.status == "finished", (run.method, run.error)
        by_method[run.method] = _selected(run)
    assert BreakerRun.objects.get(method="zeroshot_history").round_index == 3  # 6 chains / 2
    assert by_method["breaker_seeded"] < by_method["seeds"]
    assert by_method["breaker_seedless"] < by_method["zeroshot_min"] <= by_method["zeroshot"]
    # Zeroshot (min) keeps the hardest of k generations.
    zs_min = BreakerRun.objects.get(method="zeroshot_min")
    assert all(c.steps_done == 5 for c in zs_min.chains.all())


def test_zero_shot_history_shows_earlier_texts_and_seedless_uses_the_mean_seed_length():
    run = run_in_foreground(
        start_breaker_run(offline_config("zeroshot_history", history_batch=3), enqueue=False).pk
    )
    assert run.target_words == round(mean(len(t.split()) for t in SEED_TEXTS))
    texts = [c.selected_text for c in run.chains.order_by("index")]
    assert len(set(texts)) == len(texts)


def test_multi_shows_every_target_and_selects_on_the_mean_over_targets():
    config = offline_config("breaker_seeded_qe", n_steps=3)
    config["targets"] = ["sim-fragile-mt", "sim-fragile-mt-b"]
    run = run_in_foreground(start_breaker_run(config, enqueue=False).pk)
    assert run.is_multi and run.status == "finished"
    step = BreakerStep.objects.filter(chain__run=run, index=2).first()
    assert set(step.translations) == {"sim-fragile-mt", "sim-fragile-mt-b"}
    per_target = [step.qe[t]["sim-qe"] for t in ("sim-fragile-mt", "sim-fragile-mt-b")]
    assert step.quality == pytest.approx(mean(per_target))
    assert "System 2: TRANSLATION |||" in step.llm_text or step.llm_text  # answered


def test_a_run_is_a_chain_of_rounds_queued_through_the_kernel(
    sent_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = start_breaker_run(offline_config("seeds"))
    assert sent_tasks == [(ADVANCE_TASK, (run.pk, 0), {"queue": "slow", "countdown": None})]
    outcome = advance_run(run.pk, 0, worker="w1")
    assert outcome.status == "done"
    assert advance_run(run.pk, 0, worker="w1").status == "stale"  # a duplicate message
    run.refresh_from_db()
    assert run.status == "finished" and run.steps_done == len(SEED_TEXTS)


def test_pause_resume_and_cancel_act_at_round_boundaries(
    sent_tasks, django_capture_on_commit_callbacks
):
    run = start_breaker_run(offline_config(n_steps=3), enqueue=False)
    assert advance_run(run.pk, 0, worker="w").status == "more"
    pause_run(run)
    assert advance_run(run.pk, 1, worker="w").status == "stopped"
    with django_capture_on_commit_callbacks(execute=True):
        resume_run(run)
    assert sent_tasks[-1][1] == (run.pk, 1)
    with pytest.raises(RunStateError):
        resume_run(run)
    cancel_run(run)
    run.refresh_from_db()
    assert run.status == "cancelled" and run.steps_done == len(SEED_TEXTS)
    assert set(run.chains.values_list("status", flat=True)) == {"stopped"}
    with pytest.raises(RunStateError):
        pause_run(run)


def test_configs_are_checked_and_refused_with_every_problem_named():
    with pytest.raises(BreakerConfigError) as caught:
        start_breaker_run(
            {"method": "breaker_seeded", "llm": "nope", "qe": [], "max_edit_share": 2}
        )
    assert set(caught.value.errors) >= {"name", "tgt_lang", "llm", "targets", "qe",
                                        "max_edit_share", "seeds"}  # fmt: skip
    with pytest.raises(BreakerConfigError) as caught:
        start_breaker_run(offline_config(method="magic"))
    assert "method" in caught.value.errors
    with pytest.raises(BreakerConfigError) as caught:
        start_breaker_run(offline_config(targets=["sim-qe"]))
    assert caught.value.errors["targets"] == "engine sim-qe has no 'translate' capability"
    assert BreakerRun.objects.count() == 0


def test_seedless_runs_take_the_item_count_and_length_from_the_config():
    config = offline_config("breaker_seedless", n_steps=2, n_items=3, target_words=20)
    del config["seeds"]
    run = run_in_foreground(start_breaker_run(config, enqueue=False).pk)
    assert run.chains.count() == 3 and run.target_words == 20 and run.status == "finished"
    assert set(BreakerChain.objects.filter(run=run).values_list("seed_text", flat=True)) == {""}
