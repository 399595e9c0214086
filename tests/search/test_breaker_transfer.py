"""Transfers of MT-breaker texts (seed 001 §3.3–3.5, Tables 3–5) on the offline world (a
simulation): the job in the foreground and through the kernel, the matrix's values, bad
configurations, permissions, budget, cancel, recovery, pages, exports and the command."""

from __future__ import annotations

import csv
import io
import json
from statistics import fmean

import pytest
from django.core.management import call_command
from django.urls import reverse

import rounds
from engines.models import EngineCall
from engines.offline import breaker_world
from engines.selectors import cost_by_scope
from search.breaker.demo import FRAGILE, FRAGILE_B, FRAGILE_QE
from search.breaker.services import RunStateError, start_breaker_comparison, start_breaker_run
from search.breaker.services import run_in_foreground as run_breaker
from search.breaker.transfer.selectors import matrix
from search.breaker.transfer.services import (
    ADVANCE_TASK,
    advance_transfer,
    cancel_transfer,
    recover_transfers,
    run_in_foreground,
    start_transfer,
)
from search.models import BreakerChain, BreakerRun, BreakerStep, BreakerTransfer, TransferResult
from tests.engines.fake_openai import breaker_reply
from tests.search.breaker_helpers import (
    SEED_TEXTS,
    offline_config,
    remote_config,
    remote_engines,
)

pytestmark = pytest.mark.django_db

FAILS = {FRAGILE: list(breaker_world.FAILURES), FRAGILE_B: ["rare", "idiom"]}


@pytest.fixture
def comparison(db) -> list[BreakerRun]:
    """Seeds and MT-breaker (seeded) on the same six seeds, against sim-fragile-mt en→cs."""
    config = {**offline_config(), "methods": ["seeds", "breaker_seeded"], "name": "Cmp"}
    runs = start_breaker_comparison({**config, "n_steps": 4}, enqueue=False)
    return [run_breaker(run.pk) for run in runs]


def _config(source_runs, /, **overrides) -> dict:
    return {
        "name": "Transfer",
        "runs": [r.pk for r in source_runs],
        "translators": [FRAGILE, FRAGILE_B],
        "languages": ["cs", "de"],
        "qe": [FRAGILE_QE],
        **overrides,
    }


def _expected(run: BreakerRun, translator: str, lang: str) -> float:
    """The cell computed straight from the simulation's functions (its only QE engine)."""
    texts = run.chains.exclude(selected_text="").values_list("selected_text", flat=True)
    return fmean(
        breaker_world.fragile_quality(
            text, breaker_world.fragile_translate(text, lang, FAILS[translator])
        )
        for text in texts
    )


def test_the_transfer_scores_every_selected_text_and_the_matrix_is_exact(comparison, settings):
    settings.BREAKER_TRANSFER_ROUND_ITEMS = 10  # several rounds: 6 texts × 2 runs × 2 × 2 = 48
    transfer = start_transfer(_config(comparison), enqueue=False)
    assert transfer.items_total == 48
    transfer = run_in_foreground(transfer.pk)
    assert transfer.status == "finished", transfer.error
    assert transfer.items_done == TransferResult.objects.count() == 48
    assert transfer.round_index == 5
    table = matrix(transfer)
    assert table.columns == [(FRAGILE, "cs"), (FRAGILE, "de"), (FRAGILE_B, "cs"), (FRAGILE_B, "de")]
    assert [row.run.method for row in table.rows] == ["seeds", "breaker_seeded"]
    for row in table.rows:
        for (translator, lang), cell in zip(table.columns, row.cells, strict=True):
            assert cell.mean == pytest.approx(_expected(row.run, translator, lang), rel=1e-12)
            assert (cell.texts, cell.errors) == (len(SEED_TEXTS), 0)
            assert cell.own == (translator == FRAGILE and lang == "cs")
    seeds, breaker = table.rows
    # The texts MT-breaker made hard for its own target are the hardest in every column ...
    assert all(c.lowest for c in breaker.cells) and not any(c.lowest for c in seeds.cells)
    # ... and the diagonal is what the run itself measured (same translator, language and QE).
    own = breaker.cells[0]
    selected = BreakerChain.objects.filter(run=breaker.run).values_list("selected_quality")
    assert own.mean == pytest.approx(fmean(q for (q,) in selected), rel=1e-12)
    # The translator that fails on fewer things transfers less difficulty.
    assert breaker.cells[2].mean > breaker.cells[0].mean
    result = TransferResult.objects.get(
        transfer=transfer, chain__run=breaker.run, chain__index=0, translator=FRAGILE_B,
        tgt_lang="de",
    )  # fmt: skip
    source = breaker.run.chains.get(index=0).selected_text
    assert result.source == source
    assert result.translation == breaker_world.fragile_translate(source, "de", ["rare", "idiom"])
    assert set(result.qe) == {FRAGILE_QE} and result.quality == result.qe[FRAGILE_QE]
    # Every call is booked in the ledger under the transfer's scope.
    booked = EngineCall.objects.filter(scope=transfer.scope)
    assert sum(booked.filter(operation="translate").values_list("items", flat=True)) == 48
    assert sum(booked.filter(operation="score").values_list("items", flat=True)) == 48


def test_a_comparison_label_names_its_runs(comparison):
    config = _config(comparison, comparison="Cmp", runs=None)
    transfer = start_transfer(config, enqueue=False)
    assert sorted(transfer.runs.values_list("pk", flat=True)) == sorted(r.pk for r in comparison)


BAD = [
    ({"translators": ["nope"]}, "translators", "no engine named 'nope'"),
    ({"translators": []}, "translators", "at least one"),
    ({"translators": [FRAGILE_QE]}, "translators", "no 'translate' capability"),
    ({"qe": []}, "qe", "at least one"),
    ({"languages": []}, "languages", "at least one"),
    ({"languages": ["cs", "not a code"]}, "languages", "not a language code"),
    ({"languages": [f"x{c}" for c in "abcdefghijklmnopqrstu"]}, "languages", "at most 20"),
    ({"runs": []}, "runs", "at least one"),
    ({"runs": [10**30]}, "runs", "positive integers"),
    ({"runs": [987654]}, "runs", "no breaker run #987654"),
    ({"budget_money": 1e30}, "budget_money", "positive amount"),
    ({"budget_money": -1}, "budget_money", "positive amount"),
    ({"name": ""}, "name", "needs a name"),
    ({"colour": "red"}, "config", "unknown key"),
]


@pytest.mark.parametrize(("overrides", "field", "message"), BAD)
def test_bad_configurations_are_a_400_naming_the_field_and_write_nothing(
    admin_client, comparison, overrides, field, message
):
    response = admin_client.post(
        "/api/breaker-transfers/", _config(comparison, **overrides), content_type="application/json"
    )
    assert response.status_code == 400
    assert message in response.json()["errors"][field]
    assert not BreakerTransfer.objects.exists() and not TransferResult.objects.exists()


def test_too_many_translations_and_unfinished_runs_are_refused(admin_client, comparison, settings):
    from search.breaker.transfer import config as transfer_config

    settings.BREAKER_TRANSFER_ROUND_ITEMS = 400
    original = transfer_config.MAX_RESULTS
    transfer_config.MAX_RESULTS = 47  # the fixture's 48 translations are one too many
    try:
        response = admin_client.post(
            "/api/breaker-transfers/", _config(comparison), content_type="application/json"
        )
    finally:
        transfer_config.MAX_RESULTS = original
    assert (
        response.status_code == 400
        and "= 48 translations" in response.json()["errors"]["languages"]
    )
    BreakerRun.objects.filter(pk=comparison[0].pk).update(status="running")
    response = admin_client.post(
        "/api/breaker-transfers/", _config(comparison), content_type="application/json"
    )
    assert response.status_code == 400 and "not over yet" in response.json()["errors"]["runs"]
    assert not BreakerTransfer.objects.exists()


def test_outsiders_see_nothing(client, outsider_user, annotator_user, comparison):
    transfer = start_transfer(_config(comparison), enqueue=False)
    for user in (outsider_user, annotator_user):
        client.force_login(user)
        assert client.get(f"/api/breaker-transfers/{transfer.pk}/").status_code == 403
        assert client.get("/api/breaker-transfers/").status_code == 403
        posted = client.post(
            "/api/breaker-transfers/", _config(comparison), content_type="application/json"
        )
        assert posted.status_code == 403
        for name in ("search:breaker_transfer", "search:breaker_transfer_csv"):
            assert client.get(reverse(name, args=[transfer.pk])).status_code in (302, 404)
    assert BreakerTransfer.objects.count() == 1


def test_api_create_queues_the_first_round_and_serves_matrix_and_results(
    admin_client, comparison, sent_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/api/breaker-transfers/", _config(comparison), content_type="application/json"
        )
    assert response.status_code == 201, response.content
    pk = response.json()["id"]
    assert sent_tasks == [(ADVANCE_TASK, (pk, 0), {"queue": "slow", "countdown": None})]
    run_in_foreground(pk)
    data = admin_client.get(f"/api/breaker-transfers/{pk}/").json()
    assert data["status"] == "finished" and data["items_done"] == 48
    cells = data["matrix"]["rows"][1]["cells"]
    assert cells[0]["own_target"] and cells[0]["lowest_in_column"] and cells[0]["texts"] == 6
    results = admin_client.get(f"/api/breaker-transfers/{pk}/results/").json()
    assert results["count"] == 48 and {"source", "translation", "qe"} <= set(results["results"][0])
    matrix_csv = admin_client.get(f"/api/breaker-transfers/{pk}/matrix-csv/").content.decode()
    assert matrix_csv.startswith("transfer,run,") and len(matrix_csv.splitlines()) == 1 + 8
    export = admin_client.get(f"/api/breaker-transfers/{pk}/export/")
    assert len(b"".join(export.streaming_content).splitlines()) == 48
    listed = admin_client.get("/api/breaker-transfers/").json()
    assert [t["id"] for t in listed["results"]] == [pk]


@pytest.fixture
def paid_run(fake_openai):
    """A finished MT-breaker run on paid engines of the fake OpenAI server (3 texts, mt en→cs)."""
    fake_openai.responder = breaker_reply
    remote_engines(fake_openai.base_url)
    return run_breaker(start_breaker_run(remote_config()).pk)


def _paid(transfer, operation: str):
    return EngineCall.objects.filter(scope=transfer.scope, operation=operation, cache_hit=False)


def test_paid_engines_book_the_cost_and_the_runs_own_translations_are_cache_hits(
    paid_run, settings
):
    settings.BREAKER_TRANSFER_ROUND_ITEMS = 3  # one language per round
    config = {"name": "Paid", "runs": [paid_run.pk], "translators": ["mt"],
              "languages": ["cs", "de"], "qe": ["qe"]}  # fmt: skip
    transfer = run_in_foreground(start_transfer(config, enqueue=False).pk)
    assert transfer.status == "finished" and transfer.items_done == 6
    # The run translated and scored its selected texts with mt into cs already: cache hits;
    # only the 3 de translations and their 3 scores are paid.
    cs = TransferResult.objects.filter(transfer=transfer, tgt_lang="cs")
    run_steps = {s.source: s for s in BreakerStep.objects.filter(chain__run=paid_run)}
    for result in cs:
        assert result.translation == run_steps[result.source].translations["mt"]
        assert result.quality == pytest.approx(run_steps[result.source].quality)
    assert _paid(transfer, "translate").count() == 3 and _paid(transfer, "score").count() == 3
    assert transfer.cost == cost_by_scope(transfer.scope)["cost"] > 0


def test_the_money_budget_stops_the_transfer_with_a_note(paid_run, settings):
    settings.BREAKER_TRANSFER_ROUND_ITEMS = 3
    config = {"name": "Budget", "runs": [paid_run.pk], "translators": ["mt"],
              "languages": ["cs", "de", "fr"], "qe": ["qe"], "budget_money": 0.0001}  # fmt: skip
    transfer = run_in_foreground(start_transfer(config, enqueue=False).pk)
    # cs costs nothing (cache hits), de spends the budget, fr is never asked.
    assert transfer.status == "finished" and transfer.items_done == 6
    assert transfer.error.startswith("stopped: the budget of 0.0001 was spent")
    assert transfer.error.endswith("3 translation(s) not made")
    assert not TransferResult.objects.filter(transfer=transfer, tgt_lang="fr").exists()


def test_cancel_stops_at_the_round_boundary(comparison):
    transfer = start_transfer(_config(comparison), enqueue=False)
    cancel_transfer(transfer)
    outcome = advance_transfer(transfer.pk, 0, worker="w")
    assert outcome.status == "stopped" and not TransferResult.objects.exists()
    with pytest.raises(RunStateError):
        cancel_transfer(BreakerTransfer.objects.get(pk=transfer.pk))


class Killed(BaseException):
    """Stands for the worker dying mid-round (after some engine calls were answered)."""


def test_a_round_killed_mid_way_writes_nothing_and_the_sweep_recovers_it(
    comparison, settings, monkeypatch
):
    settings.ROUND_LEASE_S = 60
    transfer = start_transfer(_config(comparison), enqueue=False)
    from search.breaker.transfer import services as transfer_services

    real_score = transfer_services._score

    def die(*args, **kwargs):
        raise Killed

    monkeypatch.setattr(transfer_services, "_score", die)
    with pytest.raises(Killed):
        advance_transfer(transfer.pk, 0, worker="dead@host:1", interrupts=(Killed,))
    assert not TransferResult.objects.exists()
    # A worker that died without releasing: its lease is still on the row.
    BreakerTransfer.objects.filter(pk=transfer.pk).update(claimed_by="dead@host:1")
    queued = []
    monkeypatch.setattr(
        transfer_services.TRANSFERS, "enqueue_round", lambda *args: queued.append(args)
    )
    assert "breaker transfer" in rounds.registered()  # the shared sweep calls recover_transfers
    assert recover_transfers(dead_worker_prefix="dead@host:") == [transfer.pk]
    assert queued == [(transfer.pk, 0)]
    monkeypatch.setattr(transfer_services, "_score", real_score)
    transfer = run_in_foreground(transfer.pk)
    assert transfer.status == "finished" and TransferResult.objects.count() == 48


def test_pages_start_a_transfer_from_a_comparison_and_show_the_matrix(
    admin_client, comparison, django_capture_on_commit_callbacks, sent_tasks
):
    page = admin_client.get(f"{reverse('search:breaker_comparison')}?name=Cmp")
    create_url = f"{reverse('search:breaker_transfer_create')}?comparison=Cmp"
    assert create_url in page.content.decode()
    form = admin_client.get(create_url)
    html = form.content.decode()
    assert form.status_code == 200 and "Transfer of Cmp" in html and 'value="cs"' in html
    bad = admin_client.post(
        create_url,
        {"name": "T", "runs": [str(r.pk) for r in comparison], "translators": [FRAGILE],
         "languages": "cs, n0t-a-c0de!", "qe": [FRAGILE_QE]},
    )  # fmt: skip
    assert bad.status_code == 400 and "not a language code" in bad.content.decode()
    assert not BreakerTransfer.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        done = admin_client.post(
            create_url,
            {"name": "T", "runs": [str(r.pk) for r in comparison],
             "translators": [FRAGILE, FRAGILE_B], "languages": "cs de", "qe": [FRAGILE_QE]},
        )  # fmt: skip
    transfer = BreakerTransfer.objects.get()
    assert done.status_code == 302 and done.url == reverse(
        "search:breaker_transfer", args=[transfer.pk]
    )
    run_in_foreground(transfer.pk)
    detail = admin_client.get(done.url).content.decode()
    assert "lower = harder to translate" in detail and "<mark>" in detail and "◆" in detail
    assert f"{matrix(transfer).rows[1].cells[0].mean:.2f}" in detail
    poll = admin_client.get(done.url, headers={"HX-Request": "true"})
    assert poll.status_code == 286 and poll["HX-Trigger"] == "transfer-changed"
    rows = list(csv.DictReader(io.StringIO(admin_client.get(
        reverse("search:breaker_transfer_csv", args=[transfer.pk])).content.decode())))  # fmt: skip
    assert len(rows) == 2 * 4 and rows[4]["method"] == "breaker_seeded"
    assert rows[4]["own_target"] == "1" and rows[4]["lowest_in_column"] == "1"
    jsonl = admin_client.get(reverse("search:breaker_transfer_jsonl", args=[transfer.pk]))
    records = [json.loads(line) for line in b"".join(jsonl.streaming_content).splitlines()]
    assert len(records) == 48 and {r["tgt_lang"] for r in records} == {"cs", "de"}
    listing = admin_client.get(reverse("search:breaker_transfer_list")).content.decode()
    assert done.url in listing


def test_the_command_runs_a_transfer_in_the_foreground(comparison, tmp_path):
    path = tmp_path / "transfer.json"
    path.write_text(json.dumps(_config(comparison)))
    out = io.StringIO()
    call_command("run_breaker_transfer", str(path), "--foreground", "--json", stdout=out)
    summary = json.loads(out.getvalue())
    assert summary["status"] == "finished"
    breaker = comparison[1]
    cell = summary["matrix"][str(breaker.pk)][f"{FRAGILE_B} de"]
    assert cell == pytest.approx(_expected(breaker, FRAGILE_B, "de"), rel=1e-12)
