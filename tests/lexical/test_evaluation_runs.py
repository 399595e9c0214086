"""Evaluations end to end in the foreground, against scripted engines on the fake server."""

from __future__ import annotations

from decimal import Decimal

import pytest

import rounds
from lexical.evaluation import rule_source, selectors, services
from lexical.evaluation.config import EvaluationConfigError
from lexical.evaluation.services import (
    EvaluationStateError,
    advance_evaluation,
    cancel_evaluation,
    recover_evaluations,
    run_in_foreground,
    start_lexical_evaluation,
)
from lexical.models import LexicalAnswer, LexicalEvaluation
from tests.engines.conftest import fake_openai  # noqa: F401  (fixture)
from tests.lexical.eval_helpers import make_engines, make_selection, rules_table, scripted

pytestmark = pytest.mark.django_db


@pytest.fixture
def selection(db):
    return make_selection()


@pytest.fixture
def server(fake_openai):  # noqa: F811
    fake_openai.responder = scripted
    make_engines(fake_openai.base_url, "oracle", "contrarian", "lazy", "mute", "ruled", "mt")
    return fake_openai


@pytest.fixture
def rules(monkeypatch, selection):
    """Rules from "oracle" and "ruled" (the other branch's Rule rows stand-in)."""

    def fake(concept_ids, generator):
        if generator not in ("oracle", "ruled"):
            return {}
        table = rules_table(selection, generator)
        return {c: table[c] for c in concept_ids if c in table}

    monkeypatch.setattr(rule_source, "rules_for", fake)


def evaluate(selection, *entries, runs=3, seed=11):
    evaluation = start_lexical_evaluation(
        {"selection": selection.pk, "entries": list(entries), "runs": runs, "seed": seed},
        enqueue=False,
    )
    return run_in_foreground(evaluation.pk)


def summary(evaluation):
    return {
        (line.entry.key if line.entry else "baseline"): line
        for line in selectors.results(evaluation).summary
    }


def test_scripted_engines_get_the_accuracy_their_script_implies(server, selection, sent_tasks):
    evaluation = evaluate(selection, "oracle:none", "contrarian:none", "lazy:none", "mute:none")
    assert evaluation.status == "finished", evaluation.error
    assert evaluation.items_done == evaluation.items_total == 4 * 3 * 5
    lines = summary(evaluation)
    assert lines["oracle:none"].row.micro_mean == 1.0
    assert lines["contrarian:none"].row.micro_mean == 0.0
    assert (lines["lazy:none"].row.micro_mean, lines["lazy:none"].reasked) == (1.0, 15)
    assert (lines["mute:none"].row.micro_mean, lines["mute:none"].unparsed) == (0.0, 15)
    # Baseline: viaje for trip (2 of 3 right), avión for plane (1 of 2) → micro 3/5, macro 7/12.
    base = lines["baseline"].row
    assert (base.micro_mean, base.macro_mean) == (pytest.approx(0.6), pytest.approx(7 / 12))
    # Everything at temperature 0, answers paid for and booked under the evaluation.
    assert {r.body.get("temperature") for r in server.requests} == {0}
    assert evaluation.cost > Decimal(0)
    assert sent_tasks == []  # the foreground twin queues nothing


def test_the_lazy_engine_is_reminded_once_and_the_mute_one_counts_wrong(server, selection):
    evaluation = evaluate(selection, "lazy:none", "mute:none", runs=1)
    lazy = LexicalAnswer.objects.filter(evaluation=evaluation, entry_key="lazy:none")
    assert all(a.reasked and a.correct for a in lazy)
    mute = LexicalAnswer.objects.filter(evaluation=evaluation, entry_key="mute:none")
    assert all(a.reasked and not a.correct and a.chosen_id is None for a in mute)
    # 5 examples × (first ask + one re-ask) × 2 engines: nothing asked a third time.
    prompts = [r.prompt for r in server.requests]
    assert len(prompts) == 20
    reminded = [p for p in prompts if "Please enclose your selected translation from" in p]
    assert len(reminded) == 10


def test_option_orders_come_from_the_seed_and_differ_between_runs(server, selection):
    first = evaluate(selection, "oracle:none", runs=3, seed=5)
    again = evaluate(selection, "contrarian:none", runs=3, seed=5)
    orders = lambda e: {  # noqa: E731
        (a.run, a.example_id): a.option_order for a in LexicalAnswer.objects.filter(evaluation=e)
    }
    assert orders(first) == orders(again)
    # Each example's three runs do not all show the same order.
    by_example = {}
    for (_run, example), order in orders(first).items():
        by_example.setdefault(example, set()).add(tuple(order))
    assert any(len(seen) > 1 for seen in by_example.values())
    for answer in LexicalAnswer.objects.filter(evaluation=first):
        assert answer.chosen_position is not None
        assert answer.option_order[answer.chosen_position] == answer.chosen_id


def test_rules_are_shown_with_self_and_other_settings(server, selection, rules):
    evaluation = evaluate(selection, "ruled:none", "ruled:self", "mute:other:oracle", runs=1)
    lines = summary(evaluation)
    assert lines["ruled:none"].row.micro_mean == 0.0
    assert lines["ruled:self"].row.micro_mean == 1.0
    ruled = [r.prompt for r in server.requests if r.prompt.startswith("Rules:")]
    assert any("- viaje/viajes: ruled says: use «viaje» for trip." in p for p in ruled)
    assert any("oracle says:" in p for p in ruled)
    assert set(evaluation.snapshot["rules"]) == {"ruled", "oracle"}


def test_translate_engines_are_matched_exactly_then_fuzzily_and_run_once(server, selection):
    evaluation = evaluate(selection, "mt:translate", runs=3)
    answers = {
        a.example.src: a
        for a in LexicalAnswer.objects.filter(evaluation=evaluation).select_related(
            "example", "chosen"
        )
    }
    assert len(answers) == 5 and {a.run for a in answers.values()} == {0}
    assert answers["We booked a trip to Spain for the holidays."].chosen.lemma == "viaje"
    # "viajecito" is closest to "viaje" (wrong: the attested one was recorrido).
    bus = answers["The bus trip along the coast route was short."]
    assert (bus.chosen.lemma, bus.correct) == ("viaje", False)
    assert answers["Our trip abroad was fun."].chosen is None
    assert answers["The plane landed at the airport."].chosen.lemma == "avión"  # exact "aviones"
    assert answers["Draw the plane of the geometry figure."].chosen.lemma == "plano"  # fuzzy
    assert all(a.option_order == [] for a in answers.values())
    line = summary(evaluation)["mt:translate"].row
    assert (line.micro_mean, line.micro_sd, line.runs) == (pytest.approx(0.6), 0.0, 1)


def test_configurations_that_cannot_run_are_refused_whole(server, selection):
    cases = [
        ({"selection": "x", "entries": ["oracle:none"]}, "selection"),
        ({"selection": 999, "entries": ["oracle:none"]}, "selection"),
        ({"selection": selection.pk, "entries": []}, "entries"),
        ({"selection": selection.pk, "entries": ["nobody:none"]}, "entries"),
        ({"selection": selection.pk, "entries": ["oracle:none", "oracle:none"]}, "entries"),
        ({"selection": selection.pk, "entries": ["oracle:self"]}, "entries"),  # no rules here
        ({"selection": selection.pk, "entries": ["oracle:none"], "runs": 0}, "runs"),
        ({"selection": selection.pk, "entries": ["oracle:none"], "runs": True}, "runs"),
        ({"selection": selection.pk, "entries": ["oracle:none"], "seed": 2**70}, "seed"),
        ({"selection": selection.pk, "entries": ["oracle:none"], "extra": 1}, "non_field_errors"),
    ]
    for config, field in cases:
        with pytest.raises(EvaluationConfigError) as caught:
            start_lexical_evaluation(config, enqueue=False)
        assert field in caught.value.errors, (config, caught.value.errors)
    assert not LexicalEvaluation.objects.exists()


def test_rounds_are_leased_stale_messages_dropped_and_cancel_stops(server, selection, settings):
    settings.LEXICAL_EVAL_ROUND_ITEMS = 4
    evaluation = start_lexical_evaluation(
        {"selection": selection.pk, "entries": ["oracle:none"], "runs": 2}, enqueue=False
    )
    assert advance_evaluation(evaluation.pk, 0, worker="w1").status == "more"
    assert advance_evaluation(evaluation.pk, 0, worker="w2").status == "stale"
    evaluation.refresh_from_db()
    assert (evaluation.items_done, evaluation.round_index) == (4, 1)
    cancel_evaluation(evaluation)
    assert advance_evaluation(evaluation.pk, 1, worker="w1").status == "stopped"
    with pytest.raises(EvaluationStateError):
        cancel_evaluation(evaluation)
    assert LexicalAnswer.objects.filter(evaluation=evaluation).count() == 4


def test_a_dead_workers_round_is_recovered_and_finished_without_duplicates(
    server, selection, sent_tasks, monkeypatch, django_capture_on_commit_callbacks
):
    evaluation = start_lexical_evaluation(
        {"selection": selection.pk, "entries": ["oracle:none"], "runs": 1}, enqueue=False
    )

    class Killed(BaseException):
        pass

    def die(*args, **kwargs):
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(services, "_ask", die)
        with pytest.raises(Killed):
            advance_evaluation(evaluation.pk, 0, worker="dead@host:1", interrupts=(Killed,))
    # The worker died without releasing: its claim is still on the row.
    LexicalEvaluation.objects.filter(pk=evaluation.pk).update(claimed_by="dead@host:1")
    with django_capture_on_commit_callbacks(execute=True):
        assert recover_evaluations(dead_worker_prefix="dead@host:") == [evaluation.pk]
    assert "lexical evaluation" in rounds.registered()  # the shared sweep calls it too
    assert sent_tasks == [
        ("lexical.advance_evaluation", (evaluation.pk, 0), {"queue": "slow", "countdown": None})
    ]
    finished = run_in_foreground(evaluation.pk)
    assert finished.status == "finished"
    assert LexicalAnswer.objects.filter(evaluation=evaluation).count() == 5


def test_a_transient_engine_error_retries_the_round(server, selection):
    from tests.engines.fake_openai import Reply

    evaluation = start_lexical_evaluation(
        {"selection": selection.pk, "entries": ["oracle:none"], "runs": 1}, enqueue=False
    )
    server.push(*[Reply.error(503)] * 20)
    outcome = advance_evaluation(evaluation.pk, 0, worker="w")
    assert outcome.status == "retry"
    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.claimed_by, evaluation.items_done) == ("running", "", 0)


def test_an_input_the_engine_refuses_fails_alone_and_long_answers_are_bounded(server, selection):
    from tests.engines.fake_openai import Reply

    def picky(body):
        prompt = body["messages"][-1]["content"]
        if "Our trip abroad" in prompt:
            return Reply.error(400, "content filter")
        if "The plane landed" in prompt:
            return Reply("x" * 10_000 + " ```avión```")
        return scripted(body)

    server.responder = picky
    evaluation = evaluate(selection, "oracle:none", runs=1)
    assert evaluation.status == "finished", evaluation.error
    answers = {a.example.src: a for a in LexicalAnswer.objects.filter(evaluation=evaluation)}
    refused = answers["Our trip abroad was fun."]
    assert (refused.correct, refused.chosen_id, refused.reasked) == (False, None, False)
    assert "content filter" in refused.error
    long = answers["The plane landed at the airport."]
    assert long.correct and len(long.raw_answer) == 4000  # parsed first, stored cut
    assert sum(a.correct for a in answers.values()) == 4
    assert summary(evaluation)["oracle:none"].errors == 1
