"""Search-run pages: list, new-run form, the live run page, topic texts, controls, sending to
annotation and exports."""

from __future__ import annotations

import json
from datetime import timedelta
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation.models import Item
from annotation.services.claims import next_item_for
from annotation.services.submissions import start_viewing, submit_annotation
from search.models import Pull, SearchRun, Topic
from search.runs.services import run_in_foreground, start_search_run
from search.topics.services import import_corpus, import_topic_tree
from tests.annotation.factories import enrolled, esa_answer
from tests.engines.factories import HeuristicEngineFactory, SyntheticEngineFactory
from tests.search.conftest import (
    crowd_run_config,
    make_corpus_tree,
    make_crowd,
    queue_rounds_settle_in_place,
    synthetic_run_config,
)

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def enqueued(monkeypatch) -> mock.Mock:
    """Rounds queued by the pages are recorded, not sent; human scores settle in place."""
    return queue_rounds_settle_in_place(monkeypatch)


@pytest.fixture
def world(db):
    return SyntheticEngineFactory(name="world", params={"n_topics": 200, "seed": 1})


def synthetic_run(**overrides) -> SearchRun:
    return start_search_run(synthetic_run_config(**overrides), enqueue=False)


def crowd_run(fake_openai, **overrides) -> SearchRun:
    make_crowd(fake_openai.base_url, translators=("mt-a", "mt-b"))
    tree = make_corpus_tree(n_topics=6, per_topic=4)
    config = crowd_run_config(tree, **overrides)
    return run_in_foreground(start_search_run(config, enqueue=False).pk)


def form_data(**overrides) -> dict:
    data = {
        "name": "From the form",
        "tree": "",
        "sampler": "synthetic",
        "sampler_engine": "",
        "difficulty_engine": "world",
        "src_lang": "en",
        "tgt_lang": "",
        "algorithm": "default",
        "params": "{}",
        "budget_pulls": "400",
        "budget_money": "",
        "k": "5",
        "seed": "0",
        "batch_size": "20",
        "human_mode": "off",
        "human_rule": "top_k",
        "human_per_topic": "2",
        "human_fraction": "0.1",
        "human_max_items": "100",
        "human_overlap": "1",
        "human_timeout_hours": "72",
    }
    return data | overrides


# --- Access ----------------------------------------------------------------------------------


def test_annotators_and_strangers_are_kept_out(client, annotator_client, world):
    run = synthetic_run()
    urls = [
        reverse("search:run_list"),
        reverse("search:run_create"),
        reverse("search:run_detail", args=[run.pk]),
        reverse("search:run_results", args=[run.pk]),
        reverse("search:run_chart", args=[run.pk]),
        reverse("search:run_topic_texts", args=[run.pk, 0]),
        reverse("search:run_export_pulls", args=[run.pk]),
        reverse("search:run_export_top_k", args=[run.pk]),
    ]
    for url in urls:
        response = annotator_client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("admin:login"))
    response = annotator_client.post(reverse("search:run_cancel", args=[run.pk]))
    assert response.status_code == 302
    response = annotator_client.post(reverse("search:run_create"), form_data())
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.status == "queued"
    assert SearchRun.objects.count() == 1


def test_search_runs_area_is_in_the_navigation(admin_client):
    page = admin_client.get(reverse("dashboard")).content.decode()
    assert f'href="{reverse("search:run_list")}"' in page


# --- List and new-run form -------------------------------------------------------------------


def test_list_shows_each_run_with_progress(admin_client, world, django_assert_max_num_queries):
    finished = run_in_foreground(synthetic_run(name="Done run").pk)
    synthetic_run(name="Waiting run", budget_money=2.5)
    with django_assert_max_num_queries(8):
        response = admin_client.get(reverse("search:run_list"))
    page = response.content.decode()
    assert response.status_code == 200
    assert "Done run" in page and "Waiting run" in page
    assert '<span class="badge ok">finished</span>' in page
    assert '<span class="badge">queued</span>' in page
    assert f'<progress value="{finished.pulls_done}" max="300"' in page
    assert "default → sequential_halving" in page
    assert "of $2.50" in page
    assert reverse("search:run_create") in page


def test_list_query_count_does_not_grow_with_runs(
    admin_client, world, django_assert_max_num_queries
):
    for number in range(12):
        synthetic_run(name=f"run {number}")
    with django_assert_max_num_queries(8):
        assert admin_client.get(reverse("search:run_list")).status_code == 200


def test_the_form_offers_ready_trees_engines_by_kind_and_the_default_method(
    admin_client, world, corpus_tree
):
    HeuristicEngineFactory(name="lengthy")
    page = admin_client.get(reverse("search:run_create")).content.decode()
    assert f'<option value="{corpus_tree.pk}">Small tree (6 leaf topics)</option>' in page
    assert '<optgroup label="Heuristic">' in page
    assert '<optgroup label="Synthetic (seed 000 §3.3)">' in page
    assert "world — synthetic world, 200 topics, no real texts" in page
    assert (
        "sequential_halving below 30,000 topics or with 2+ pulls per topic, eb_ucb otherwise"
        in page
    )
    for policy in ("brute", "greedy", "epsilon_greedy", "contextual"):
        assert f'<option value="{policy}">' in page


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"sampler": "corpus"}, "tree", "a topic tree is required"),
        ({"params": "[1, 2]"}, "params", "must be a JSON object"),
        ({"params": "{oops"}, "params", "not valid JSON"),
        ({"k": "500"}, "k", "must be at most the number of topics (200)"),
        ({"human_mode": "replace"}, "human_mode", "needs an artificial-crowd difficulty engine"),
        ({"algorithm": "contextual"}, "algorithm", "needs a topic tree"),
        ({"sampler": "llm"}, "sampler_engine", "Choose the chat engine"),
        ({"budget_pulls": "", "budget_money": ""}, "budget_pulls", "a budget in pulls"),
    ],
)
def test_invalid_settings_come_back_next_to_their_field(
    admin_client, world, enqueued, overrides, field, message
):
    response = admin_client.post(reverse("search:run_create"), form_data(**overrides))
    assert response.status_code == 400
    form = response.context["form"]
    assert any(message in error for error in form.errors[field]), form.errors
    assert message in response.content.decode()
    assert SearchRun.objects.count() == 0
    enqueued.assert_not_called()


def test_the_params_a_method_refuses_are_reported(admin_client, world):
    data = form_data(algorithm="epsilon_greedy", params='{"epsilon": 7}')
    response = admin_client.post(reverse("search:run_create"), data)
    assert response.status_code == 400
    assert "the epsilon_greedy method refuses these parameters" in response.content.decode()


def test_a_bad_human_setting_is_shown_above_the_form(admin_client, world):
    response = admin_client.post(reverse("search:run_create"), form_data(human_fraction="0"))
    assert response.status_code == 400
    assert "Human settings: fraction must be in (0, 1]" in response.content.decode()


def test_creating_a_run_from_the_form_queues_its_first_round(
    admin_client, admin_user, world, enqueued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = admin_client.post(
            reverse("search:run_create"), form_data(params='{"explore": 0.4}')
        )
    run = SearchRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("search:run_detail", args=[run.pk])
    assert len(callbacks) == 1
    enqueued.assert_called_once_with(run.pk, 0)
    assert (run.name, run.sampler, run.difficulty_engine.name) == (
        "From the form",
        "synthetic",
        "world",
    )
    assert (run.budget_pulls, run.k, run.batch_size, run.params) == (400, 5, 20, {"explore": 0.4})
    assert run.created_by == admin_user
    assert run.human_settings["max_items"] == 100


def test_the_run_page_says_queued_only_while_the_run_is_queued(admin_client, world):
    response = admin_client.post(reverse("search:run_create"), form_data(), follow=True)
    run = SearchRun.objects.get()

    page = response.content.decode()
    assert f'<p class="message message-success" role="status">Run #{run.pk} created.</p>' in page
    assert "waiting for a worker" in page  # the polled status, not the flash message

    run_in_foreground(run.pk)
    status = admin_client.get(reverse("search:run_detail", args=[run.pk]), **HTMX)
    page = status.content.decode()
    assert "finished" in page
    assert "queued" not in page and "waiting for a worker" not in page


def test_duplicate_prefills_the_form_from_a_run(admin_client, world):
    run = synthetic_run(budget_money=3, human_settings={"max_items": 7})
    form = admin_client.get(reverse("search:run_create"), {"from": run.pk}).context["form"]
    assert form.initial["name"] == "Synthetic small (copy)"
    assert form.initial["difficulty_engine"] == "world"
    assert form.initial["sampler"] == "synthetic"
    assert (form.initial["k"], form.initial["batch_size"], form.initial["seed"]) == (5, 50, 3)
    assert form.initial["human_max_items"] == 7
    page = admin_client.get(reverse("search:run_detail", args=[run.pk])).content.decode()
    assert f"{reverse('search:run_create')}?from={run.pk}" in page


def test_duplicating_an_unknown_run_is_a_404(admin_client):
    assert admin_client.get(reverse("search:run_create"), {"from": 999}).status_code == 404


# --- The run page ----------------------------------------------------------------------------


def test_a_finished_synthetic_run_shows_status_top_k_chart_and_truth(admin_client, world):
    run = run_in_foreground(synthetic_run().pk)
    assert run.status == "finished" and run.pulls_done == 300
    response = admin_client.get(reverse("search:run_detail", args=[run.pk]))
    page = response.content.decode()
    assert response.status_code == 200
    assert '<span class="badge ok">finished</span>' in page
    assert "300 / 300 (100%)" in page
    assert 'hx-trigger="every 2s"' not in page  # nothing left to poll for
    assert "Pause" not in page
    rows = response.context["rows"]
    assert len(rows) == 5
    for row in rows:
        assert f"<td>Synthetic topic #{row.arm}</td>" in page
        assert f"{row.true_mean:.1f}" in page
        interval = (
            f'{row.posterior_mean:.1f} <small class="muted">({row.lower:.1f}–{row.upper:.1f})'
        )
        assert interval in page
    assert "True mean" in page
    assert reverse("search:run_chart", args=[run.pk]) in page
    assert "worker memory" in page and " MB" in page
    assert "has nothing to send" in page  # a synthetic world has no translations


def test_status_partial_polls_until_the_run_is_over(admin_client, world):
    run = synthetic_run()
    url = reverse("search:run_detail", args=[run.pk])
    response = admin_client.get(url, **HTMX)
    assert response.status_code == 200
    body = response.content.decode()
    assert 'hx-trigger="every 2s"' in body
    assert "<html" not in body
    assert "waiting for a worker" in body
    version = body.split("?seen=")[1].split('"')[0]
    assert response["HX-Trigger"] == "run-changed"  # no "seen": the page may be stale
    unchanged = admin_client.get(url, {"seen": version}, **HTMX)
    assert "HX-Trigger" not in unchanged

    run_in_foreground(run.pk)
    moved = admin_client.get(url, {"seen": version}, **HTMX)
    assert moved.status_code == 286  # htmx stops polling
    assert moved["HX-Trigger"] == "run-changed"
    assert 'hx-trigger="every 2s"' not in moved.content.decode()
    assert "300 / 300" in moved.content.decode()


def test_the_status_poll_leaves_the_bandit_state_in_the_database(admin_client, world):
    run = run_in_foreground(synthetic_run().pk)
    url = reverse("search:run_detail", args=[run.pk])
    with CaptureQueriesContext(connection) as queries:
        assert admin_client.get(url, **HTMX).status_code == 286
    assert not [q for q in queries if "policy_state" in q["sql"]]


def test_results_partial_and_chart(admin_client, world):
    run = run_in_foreground(synthetic_run().pk)
    results = admin_client.get(reverse("search:run_results", args=[run.pk]), **HTMX)
    body = results.content.decode()
    assert results.status_code == 200
    assert body.lstrip().startswith('<section id="run-results"')
    assert 'hx-trigger="run-changed from:body"' in body
    assert body.count('class="texts-row"') == 5
    chart = admin_client.get(reverse("search:run_chart", args=[run.pk]))
    assert chart["Content-Type"] == "image/svg+xml"
    svg = chart.content.decode()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for label in ("estimated top-k mean", "true mean of the chosen top-k", "oracle (true top-k)"):
        assert label in svg


def test_a_run_without_rounds_has_an_empty_chart_and_table(admin_client, world):
    run = synthetic_run()
    page = admin_client.get(reverse("search:run_detail", args=[run.pk])).content.decode()
    assert "No topic has been pulled yet." in page
    assert "No engine call has been made for this run yet." in page
    svg = admin_client.get(reverse("search:run_chart", args=[run.pk])).content.decode()
    assert "no round finished yet" in svg


def test_a_failed_run_shows_its_error(admin_client, world):
    run = synthetic_run()
    SearchRun.objects.filter(pk=run.pk).update(status="failed", error="engine <down>")
    page = admin_client.get(reverse("search:run_detail", args=[run.pk])).content.decode()
    assert "The run failed." in page
    assert "engine &lt;down&gt;" in page


def test_topic_texts_load_lazily_with_their_difficulty(admin_client, world):
    run = run_in_foreground(synthetic_run().pk)
    arm = run.result["top_k"][0]
    url = reverse("search:run_topic_texts", args=[run.pk, arm])
    page = admin_client.get(reverse("search:run_detail", args=[run.pk])).content.decode()
    assert f'hx-get="{url}" hx-trigger="toggle once"' in page
    fragment = admin_client.get(url, **HTMX)
    body = fragment.content.decode()
    pulls = Pull.objects.filter(run=run, arm=arm).order_by("-difficulty")
    assert "<html" not in body
    assert '<table class="pull-rows">' in body  # nothing translated: compact rows
    hardest = list(pulls[:20])
    positions = [body.index(f'<td lang="en" dir="auto">{p.text}</td>') for p in hardest]
    assert positions == sorted(positions)  # hardest first
    assert f"<strong>{hardest[0].difficulty:.1f}</strong>" in body
    assert 'type="checkbox"' not in body  # no translations, nothing to send
    full = admin_client.get(url)
    assert f"Synthetic topic #{arm}" in full.content.decode()
    assert "<html" in full.content.decode()


def test_crowd_run_page_shows_translations_scores_sources_and_costs(admin_client, fake_openai):
    run = crowd_run(fake_openai)
    assert run.status == "finished"
    page = admin_client.get(reverse("search:run_detail", args=[run.pk])).content.decode()
    for engine in ("mt-a", "mt-b", "qe"):
        assert f'<a href="{reverse("engines:detail", args=[engine])}">{engine}</a>' in page
    assert f"${run.cost:.4f}" in page
    row = top_topic(run)
    assert f'<a href="{reverse("search:topic_detail", args=[row.topic.pk])}">{row.name}</a>' in page

    texts = admin_client.get(
        reverse("search:run_topic_texts", args=[run.pk, row.arm]), **HTMX
    ).content.decode()
    pull = Pull.objects.filter(run=run, arm=row.arm).order_by("-difficulty", "id").first()
    assert pull.text in texts
    assert pull.translations["mt-a"] in texts
    assert ">QE qe</th>" in texts
    qe_of_mt_b = next(value for t, q, value in pull.scores if t == "mt-b")
    assert f"{qe_of_mt_b:.1f}" in texts
    assert f'href="{pull.sample.source_url}"' in texts
    assert f'name="pulls" value="{pull.pk}" form="send-form"' in texts


def top_topic(run: SearchRun):
    from search.runs.selectors import top_topics

    return top_topics(run)[0]


def test_user_text_is_escaped(admin_client, world):
    HeuristicEngineFactory(name="lengthy")
    tree = import_topic_tree(["<b>Bold topic</b>", "Plain"], name="Escapes")
    import_corpus(
        tree,
        "\n".join(
            json.dumps({"topic": name, "text": f"<script>alert({n})</script> text {n}"})
            for name in ("<b>Bold topic</b>", "Plain")
            for n in range(3)
        ),
    )
    config = {
        "name": "<i>run</i>",
        "tree": tree.name,
        "sampler": "corpus",
        "difficulty_engine": "lengthy",
        "budget_pulls": 6,
        "k": 2,
        "batch_size": 2,
    }
    run = run_in_foreground(start_search_run(config, enqueue=False).pk)
    page = admin_client.get(reverse("search:run_detail", args=[run.pk])).content.decode()
    assert "<i>run</i>" not in page and "&lt;i&gt;run&lt;/i&gt;" in page
    assert "<b>Bold topic</b>" not in page and "&lt;b&gt;Bold topic&lt;/b&gt;" in page
    arm = Topic.objects.get(tree=tree, name="<b>Bold topic</b>").arm
    texts = admin_client.get(reverse("search:run_topic_texts", args=[run.pk, arm])).content
    assert b"<script>alert" not in texts and b"&lt;script&gt;alert" in texts


# --- Controls --------------------------------------------------------------------------------


def test_pause_resume_and_cancel_take_effect_and_queue_the_next_round(
    admin_client, world, enqueued, django_capture_on_commit_callbacks
):
    run = synthetic_run()
    detail = reverse("search:run_detail", args=[run.pk])
    response = admin_client.post(reverse("search:run_pause", args=[run.pk]))
    assert response.status_code == 302 and response["Location"] == detail
    run.refresh_from_db()
    assert run.status == "paused"

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("search:run_resume", args=[run.pk]), **HTMX)
    assert response.status_code == 200
    assert '<span class="badge live">running</span>' in response.content.decode()
    assert 'hx-trigger="every 2s"' in response.content.decode()
    enqueued.assert_called_once_with(run.pk, 0)
    run.refresh_from_db()
    assert run.status == "running"

    response = admin_client.post(reverse("search:run_cancel", args=[run.pk]), **HTMX)
    assert response.status_code == 286
    assert '<span class="badge warn">cancelled</span>' in response.content.decode()
    run.refresh_from_db()
    assert run.status == "cancelled" and run.finished_at is not None


def test_a_control_that_does_not_apply_changes_nothing(admin_client, world):
    run = run_in_foreground(synthetic_run().pk)
    before = run.updated_at
    response = admin_client.post(reverse("search:run_pause", args=[run.pk]), **HTMX)
    assert "Nothing changed: a finished run cannot be paused." in response.content.decode()
    response = admin_client.post(reverse("search:run_resume", args=[run.pk]), follow=True)
    assert "Nothing changed: a finished run cannot be resumed." in response.content.decode()
    run.refresh_from_db()
    assert run.status == "finished" and run.updated_at == before


def test_controls_answer_post_only(admin_client, world):
    run = synthetic_run()
    assert admin_client.get(reverse("search:run_cancel", args=[run.pk])).status_code == 405


# --- Sending to annotation -------------------------------------------------------------------


def test_ticked_texts_go_to_an_esa_campaign(admin_client, fake_openai):
    run = crowd_run(fake_openai)
    chosen = list(Pull.objects.filter(run=run).order_by("id")[:3])
    response = admin_client.post(
        reverse("search:run_send", args=[run.pk]),
        {"scope": "selected", "pulls": [p.pk for p in chosen]},
        follow=True,
    )
    run.refresh_from_db()
    assert run.campaign is not None
    assert f"Sent 3 text(s) to annotation campaign “{run.campaign.name}”." in (
        response.content.decode()
    )
    items = Item.objects.filter(campaign=run.campaign)
    assert items.count() == 3 * 2  # one item per translation
    assert set(items.values_list("origin", flat=True)) == {"search"}
    assert {item.origin_ref for item in items} == {
        f"pull:{p.pk}:{t}" for p in chosen for t in ("mt-a", "mt-b")
    }
    statuses = Pull.objects.filter(pk__in=[p.pk for p in chosen]).values_list("human_status")
    assert set(statuses) == {("sent",)}
    page = admin_client.get(reverse("search:run_detail", args=[run.pk])).content.decode()
    assert reverse("annotation:campaign_detail", args=[run.campaign_id]) in page

    again = admin_client.post(reverse("search:run_send", args=[run.pk]), {"pulls": [chosen[0].pk]})
    assert again.status_code == 400
    assert "None of the chosen texts can be sent" in again.content.decode()
    assert Item.objects.filter(campaign=run.campaign).count() == 6


def test_all_texts_of_the_top_k_can_be_sent_at_once(admin_client, fake_openai):
    run = crowd_run(fake_openai)
    arms = run.result["top_k"]
    expected = Pull.objects.filter(run=run, arm__in=arms).count()
    response = admin_client.post(reverse("search:run_send", args=[run.pk]), {"scope": "top_k"})
    assert response.status_code == 302
    assert Pull.objects.filter(run=run, human_status="sent").count() == expected
    sent = Pull.objects.filter(run=run, human_status="sent")
    assert set(sent.values_list("arm", flat=True)) == set(arms)


def test_texts_without_translations_cannot_be_sent(admin_client, world):
    run = run_in_foreground(synthetic_run().pk)
    ids = list(Pull.objects.filter(run=run).values_list("pk", flat=True)[:3])
    response = admin_client.post(reverse("search:run_send", args=[run.pk]), {"pulls": ids})
    assert response.status_code == 400
    assert "None of the chosen texts can be sent" in response.content.decode()
    assert not Item.objects.exists()
    assert not Pull.objects.filter(run=run).exclude(human_status="").exists()


def test_calibrate_run_shows_human_counts_and_the_calibration_report(
    admin_client, fake_openai, django_capture_on_commit_callbacks
):
    run = crowd_run(
        fake_openai,
        human_mode="calibrate",
        human_settings={"overlap": 1, "rule": "fraction", "fraction": 0.5, "max_items": 8},
    )
    assert run.status == "waiting"
    page = admin_client.get(reverse("search:run_detail", args=[run.pk])).content.decode()
    assert "8 texts sent · 0 received · 0 applied" in page
    assert "No human scores have arrived yet" in page

    annotator = enrolled(run.campaign, "rater")
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        while (item := next_item_for(annotator, run.campaign, now=now)) is not None:
            pull = Pull.objects.get(pk=int(item.origin_ref.split(":")[1]))
            answer = esa_answer(round(100 - pull.automatic_difficulty / 2))
            # Ten seconds an item: an annotator answering in no time fails QC and counts for
            # nothing (annotation.selectors.item_results).
            start_viewing(annotator, item, now=now)
            now += timedelta(seconds=10)
            submit_annotation(annotator, item, answer, now=now)
    run.refresh_from_db()
    assert run.status == "finished"
    page = admin_client.get(reverse("search:run_detail", args=[run.pk])).content.decode()
    assert "8 texts sent · 8 received · 8 applied" in page
    assert "fitted on 8 judged texts" in page
    before, after = run.calibration["before"], run.calibration["after_cross_validated"]
    assert f"{before['mae']:.2f}" in page and f"{after['mae']:.2f}" in page
    assert "After (cross-validated)" in page and "cross-validated (leave-one-out)" in page
    assert f"{before['kendall_tau']:.3f}" in page
    chart = admin_client.get(reverse("search:run_calibration_chart", args=[run.pk]))
    assert chart["Content-Type"] == "image/svg+xml"
    assert "fitted map" in chart.content.decode()


# --- Exports ---------------------------------------------------------------------------------


def test_pulls_export_streams_one_line_per_pull(admin_client, world):
    run = run_in_foreground(synthetic_run().pk)
    response = admin_client.get(reverse("search:run_export_pulls", args=[run.pk]))
    assert response.streaming
    assert response["Content-Disposition"] == (
        f'attachment; filename="search-run-{run.pk}-pulls.jsonl"'
    )
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert len(lines) == run.pulls_done == 300
    records = [json.loads(line) for line in lines]
    assert [(r["round"], r["slot"]) for r in records] == sorted(
        (r["round"], r["slot"]) for r in records
    )
    first = Pull.objects.get(run=run, round_index=0, slot=0)
    assert records[0] == {
        "id": first.pk, "round": 0, "slot": 0, "arm": first.arm, "topic_id": None, "topic": None,
        "text": first.text, "source_url": "", "origin": "synthetic", "translations": {},
        "scores": [], "automatic_difficulty": first.automatic_difficulty,
        "human_difficulty": None, "human_scores": {}, "human_status": "",
        "difficulty": first.difficulty,
    }  # fmt: skip


def test_pulls_export_of_a_crowd_run_carries_topics_translations_and_scores(
    admin_client, fake_openai
):
    run = crowd_run(fake_openai)
    response = admin_client.get(reverse("search:run_export_pulls", args=[run.pk]))
    records = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert len(records) == run.pulls_done == 16
    record = records[0]
    pull = Pull.objects.get(pk=record["id"])
    assert record["topic"] == pull.topic.path
    assert record["source_url"] == pull.sample.source_url
    assert record["origin"] == "corpus"
    assert set(record["translations"]) == {"mt-a", "mt-b"}
    assert {(s["translator"], s["quality_estimator"]) for s in record["scores"]} == {
        ("mt-a", "qe"),
        ("mt-b", "qe"),
    }


def test_top_k_export_has_config_topics_and_their_hardest_texts(admin_client, fake_openai):
    run = crowd_run(fake_openai)
    response = admin_client.get(reverse("search:run_export_top_k", args=[run.pk]))
    assert response["Content-Disposition"] == (
        f'attachment; filename="search-run-{run.pk}-top-k.json"'
    )
    document = json.loads(response.content)
    assert document["run"] == run.pk
    assert document["config"]["difficulty_engine"] == "crowd"
    assert document["config"]["tree"] == run.tree.name
    assert document["summary"]["pulls"] == 16
    assert [t["arm"] for t in document["top_k"]] == run.result["top_k"]
    for topic in document["top_k"]:
        assert topic["count"] == len(topic["texts"]) or len(topic["texts"]) == 5
        difficulties = [text["difficulty"] for text in topic["texts"]]
        assert difficulties == sorted(difficulties, reverse=True)
        assert all(text["translations"] for text in topic["texts"])
        assert topic["topic"] == Topic.objects.get(pk=topic["topic_id"]).path


def test_sending_with_nothing_ticked_says_what_to_do(admin_client, fake_openai):
    run = crowd_run(fake_openai)
    response = admin_client.post(reverse("search:run_send", args=[run.pk]), {"scope": "selected"})
    assert response.status_code == 400
    assert "Tick the texts to send first" in response.content.decode()
    assert not Item.objects.exists()
