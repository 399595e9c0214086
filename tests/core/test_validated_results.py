"""Validated means validated: an annotator who fails QC moves no human result anywhere.

The search human loop, datasets built from campaigns, the dashboard's per-item scores and the
per-item export all read ``annotation.selectors.item_results``; a careless annotator who fails
the attention check may score the regular items 0 or 100 and every one of them stays put. The
Prolific completion code follows the verdict the dashboard shows.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import exports, progress, qc
from annotation.models import Annotator, Enrollment, Item
from annotation.services.campaigns import add_items, create_campaign
from annotation.services.claims import next_item_for
from annotation.services.submissions import start_viewing, submit_annotation
from difficulty.services.datasets import build_difficulty_dataset_from_campaign
from search.models import Pull
from search.runs.services import run_in_foreground, start_search_run
from tests.annotation.factories import enrolled, esa_item
from tests.engines.conftest import fake_openai  # noqa: F401  (fixture)
from tests.search.conftest import (
    crowd_run_config,
    make_corpus_tree,
    make_crowd,
    queue_rounds_settle_in_place,
)

CHECK = {"doc_id": "check", "seg_id": "1", "source": "The dog ran home.",
         "target": "Der Hund lief nach Hause.", "kind": "attention_check",
         "expected": {"score_min": 90, "no_spans": True}}  # fmt: skip
GOOD_SCORE = 70


def answer(score: int) -> dict:
    return {"spans": [], "score": score, "confirmed_low_score": True}


def annotate(campaign, name: str, *, regular: int, check: int, seconds: float = 10.0):
    annotator = enrolled(campaign, name)
    now = timezone.now()
    while (item := next_item_for(annotator, campaign, now=now)) is not None:
        start_viewing(annotator, item, now=now)
        now += timedelta(seconds=seconds)
        score = check if item.kind == Item.Kind.ATTENTION_CHECK else regular
        submit_annotation(annotator, item, answer(score), now=now)
        now += timedelta(seconds=1)
    return Enrollment.objects.get(annotator=annotator, campaign=campaign)


@pytest.mark.parametrize("careless_score", [0, 100])
def test_a_failing_annotator_moves_no_result(
    db,
    fake_openai,  # noqa: F811
    monkeypatch,
    django_capture_on_commit_callbacks,
    careless_score,
):
    queue_rounds_settle_in_place(monkeypatch)
    make_crowd(fake_openai.base_url, translators=("mt-a", "mt-b"))
    config = crowd_run_config(
        make_corpus_tree(n_topics=6, per_topic=4),
        name="validated",
        human_mode="replace",
        human_settings={"overlap": 2, "rule": "top_k", "per_topic": 1, "max_items": 1},
    )
    run = run_in_foreground(start_search_run(config, enqueue=False).pk)
    campaign = run.campaign
    add_items(campaign, [CHECK])

    with django_capture_on_commit_callbacks(execute=True):
        careful = annotate(campaign, "careful", regular=GOOD_SCORE, check=95)
        careless = annotate(campaign, "careless", regular=careless_score, check=20)

    assert (qc.verdict_for(careful), qc.verdict_for(careless)) == ("pass", "fail")
    careless_name = careless.annotator.pseudonym
    # 1. The search human loop: difficulty = 100 − the careful annotator's score.
    (pull,) = Pull.objects.filter(run=run).exclude(human_status="")
    assert pull.human_difficulty == 100 - GOOD_SCORE
    assert pull.human_scores == {"mt-a": GOOD_SCORE, "mt-b": GOOD_SCORE}
    # 2. A dataset built from the campaign.
    dataset = build_difficulty_dataset_from_campaign(
        campaign, name=f"from campaign {careless_score}"
    )
    (segment,) = dataset.segments.all()
    assert segment.scores == {"mt-a": GOOD_SCORE, "mt-b": GOOD_SCORE}
    # 3. The dashboard's per-item scores (the score histogram) and its QC column.
    assert progress.score_bins(campaign) == [0] * 7 + [2, 0, 0]
    rows = {row.pseudonym: row for row in progress.annotator_progress(campaign)}
    assert rows[careless_name].qc.verdict == "fail"
    # 4. The per-item export.
    items = [json.loads(line) for line in exports.stream_export(campaign, "jsonl", aggregate=True)]
    assert [(r["mean_score"], r["n_annotations"], r["excluded"]) for r in items] == [
        (GOOD_SCORE, 1, {careless_name: "fail"})
    ] * 2


def _prolific(client, campaign, pid: str) -> Annotator:
    post = {"PROLIFIC_PID": pid, "native_language": "de", "working_languages": "en",
            "consent": "on"}  # fmt: skip
    client.post(f"/annotation/join/{campaign.slug}/", post)
    return Annotator.objects.get(prolific_pid=pid)


@pytest.mark.parametrize(
    ("seconds", "verdict", "code"), [(1, "fail", "FAIL9"), (20, "pass", "PASS1")]
)
def test_prolific_code_follows_the_verdict_the_dashboard_shows(
    client, admin_user, seconds, verdict, code
):
    """Three items answered in one second each: fail on the dashboard and in the code.

    Before, the dashboard judged time only from five submissions on and said pass, while the
    completion code judged it "at the end" and gave the fail code.
    """
    items = [esa_item(n) for n in (1, 2, 3)]
    campaign = create_campaign(
        "Prolific speed", "esa", items, prolific_pass_code="PASS1", prolific_fail_code="FAIL9"
    )
    participant = _prolific(client, campaign, "pid-speedy")
    now = timezone.now()
    while (item := next_item_for(participant, campaign, now=now)) is not None:
        start_viewing(participant, item, now=now)
        now += timedelta(seconds=seconds)
        submit_annotation(participant, item, answer(80), now=now)

    finish = client.get(reverse("annotation:finish", args=[campaign.pk]))
    assert finish["Location"].endswith(f"?cc={code}")

    client.force_login(admin_user)
    (row,) = progress.annotator_progress(campaign)
    assert row.qc.verdict == verdict
    page = client.get(reverse("annotation:dashboard_campaign", args=[campaign.pk]))
    assert f">{verdict}<" in page.content.decode()
    detail = client.get(reverse("annotation:campaign_detail", args=[campaign.pk]))
    assert f">{verdict}</span>" in detail.content.decode()
