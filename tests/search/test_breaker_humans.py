"""People on MT-breaker runs (seed 001 §3.6): send the selected texts to annotation (page, API,
comparison), human scores arrive beside QE, a translation task adds a Human system, the report
(Tables 6 and 11), calibration, QC and permissions."""

from __future__ import annotations

import json
from datetime import timedelta

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Campaign, Item
from annotation.services.claims import next_item_for
from annotation.services.submissions import start_viewing, submit_annotation
from difficulty.calibration import fit_calibration
from search.breaker.demo import FRAGILE, FRAGILE_B
from search.breaker.human_report import calibration_report, human_report
from search.breaker.humans import human_score, parse_ref, qe_of, record_results
from search.breaker.services import run_in_foreground, start_breaker_comparison, start_breaker_run
from search.models import BreakerCampaign, BreakerChain, BreakerStep
from tests.annotation.factories import enrolled
from tests.search.breaker_helpers import offline_config

pytestmark = pytest.mark.django_db
TARGETS = [FRAGILE, FRAGILE_B]
MISTRANSLATION = {"category": "Accuracy", "subcategory": "Mistranslation", "severity": "major"}
FLAG = {"non_scorable": True, "non_scorable_reason": "the source is contrived"}


@pytest.fixture
def run(db):
    config = offline_config(n_steps=2, targets=TARGETS)
    return run_in_foreground(start_breaker_run(config, enqueue=False).pk)


def send(client, run, **form):
    url = reverse("search:breaker_send", args=[run.pk])
    return client.post(url, {"protocol": "esa_mqm", "overlap": "1", **form})


def annotate(campaign, answer_for, name="rater", seconds=10.0) -> int:
    """One annotator takes every item (services, explicit times) and finishes; an answer in
    under the campaign's minimum time fails QC's time rule."""
    annotator = enrolled(campaign, name)
    now = timezone.now()
    done = 0
    while (item := next_item_for(annotator, campaign, now=now)) is not None:
        start_viewing(annotator, item, now=now)
        now += timedelta(seconds=seconds)
        submit_annotation(annotator, item, answer_for(item), now=now)
        now += timedelta(seconds=1)
        done += 1
    return done


def hybrid_answer(item: Item) -> dict:
    """FRAGILE gets 30 with one mistranslation, except its first text (flagged); FRAGILE_B 80."""
    if item.system == FRAGILE:
        if item.seg_id and item.doc_id.endswith("chain0"):
            return FLAG
        return {"spans": [{"start": 0, "end": 1, **MISTRANSLATION}], "score": 30}
    return {"spans": [], "score": 80}


def selected_steps(run) -> list[BreakerStep]:
    chains = BreakerChain.objects.filter(run=run).order_by("index")
    return [BreakerStep.objects.get(chain=c, index=c.selected_step) for c in chains]


# --- sending ---------------------------------------------------------------------------------


def test_send_from_the_run_page_makes_one_item_per_selected_text_and_target(admin_client, run):
    response = send(admin_client, run, overlap="2")
    assert response.status_code == 302
    campaign = Campaign.objects.get()
    assert (campaign.protocol, campaign.overlap, campaign.tgt_lang) == ("esa_mqm", 2, "cs")
    assert BreakerCampaign.objects.get().run == run
    steps = selected_steps(run)
    items = list(Item.objects.filter(campaign=campaign).order_by("position"))
    assert len(items) == len(steps) * 2
    first = items[0]
    ref = parse_ref(first.origin_ref)
    assert first.origin == "breaker" and (ref.purpose, ref.run, ref.chain) == ("score", run.pk, 0)
    assert (ref.step, ref.system) == (steps[0].index, FRAGILE)
    assert first.source == steps[0].source and first.target == steps[0].translations[FRAGILE]
    assert first.meta["qe"] == pytest.approx(next(iter(steps[0].qe[FRAGILE].values())))
    page = admin_client.get(reverse("search:breaker_detail", args=[run.pk])).content.decode()
    assert campaign.name in page and "0 / 12" in page


@pytest.mark.parametrize(
    ("form", "field"),
    [({"protocol": "choice"}, "protocol"), ({"overlap": "0"}, "overlap"),
     ({"overlap": "two"}, "overlap")],
)  # fmt: skip
def test_a_refused_send_is_a_400_naming_the_field_and_writes_nothing(
    admin_client, run, form, field
):
    response = send(admin_client, run, **form)
    assert response.status_code == 400
    assert f"<li>{field}: " in response.content.decode()
    assert Campaign.objects.count() == 0 and BreakerCampaign.objects.count() == 0


def test_an_unfinished_run_cannot_be_sent(admin_client):
    queued = start_breaker_run(offline_config(n_steps=2), enqueue=False)
    response = admin_client.post(
        f"/api/breaker-runs/{queued.pk}/send-to-annotation/",
        {"protocol": "esa"},
        content_type="application/json",
    )
    assert response.status_code == 400 and "run" in response.json()["errors"]
    assert Campaign.objects.count() == 0


# --- results, report, calibration ------------------------------------------------------------


def test_run_send_annotate_scores_arrive_and_the_report_shows_them(
    admin_client, run, django_capture_on_commit_callbacks
):
    sent = admin_client.post(
        f"/api/breaker-runs/{run.pk}/send-to-annotation/",
        {"protocol": "esa_mqm", "overlap": 1},
        content_type="application/json",
    )
    assert sent.status_code == 201, sent.content
    campaign = Campaign.objects.get(pk=sent.json()["campaign"])
    automatic = dict(BreakerChain.objects.filter(run=run).values_list("index", "selected_quality"))
    with django_capture_on_commit_callbacks(execute=True):
        assert annotate(campaign, hybrid_answer) == 12

    assert record_results(campaign) == 0  # idempotent: reading again changes nothing
    steps = selected_steps(run)
    first = steps[0].human
    assert first[FRAGILE][str(campaign.pk)] == {
        "protocol": "esa_mqm", "score": None, "judgments": 1, "non_scorable": 1,
        "categories": {},
    }  # fmt: skip
    assert first[FRAGILE_B][str(campaign.pk)]["score"] == 80.0
    assert steps[1].human[FRAGILE][str(campaign.pk)]["categories"] == {"Accuracy/Mistranslation": 1}
    chains = list(BreakerChain.objects.filter(run=run).order_by("index"))
    # The automatic quality stays; the human one is beside it (the flagged target has none).
    assert {c.index: c.selected_quality for c in chains} == automatic
    assert [c.human_quality for c in chains] == [80.0] + [55.0] * 5

    report = admin_client.get(f"/api/breaker-runs/{run.pk}/humans/").json()
    rows = {row["system"]: row for row in report["rows"]}
    assert rows[FRAGILE]["mean_human_score"] == 30.0
    assert rows[FRAGILE]["non_scorable_rate"] == pytest.approx(1 / 6)
    assert rows[FRAGILE]["mqm_categories"] == {"Accuracy/Mistranslation": 5}
    assert rows[FRAGILE_B]["mean_human_score"] == 80.0 and rows[FRAGILE_B]["non_scorable"] == 0
    assert rows[FRAGILE]["mean_qe"] is not None and rows[FRAGILE]["texts"] == 6

    page = admin_client.get(reverse("search:breaker_detail", args=[run.pk])).content.decode()
    assert "Report per method × translator" in page and "MQM error categories" in page
    assert "<strong>30.0</strong>" in page and "17% <small" in page
    assert "Accuracy/Mistranslation" in page and "100%" in page
    chain = admin_client.get(reverse("search:breaker_chain", args=[run.pk, 1])).content.decode()
    assert "human score 55.0" in chain


def test_calibration_fits_qe_on_the_human_scores(
    admin_client, run, django_capture_on_commit_callbacks
):
    send(admin_client, run, protocol="esa")
    campaign = Campaign.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        annotate(
            campaign,
            lambda item: {"spans": [], "score": int(item.meta["qe"] // 2) + 50,
                          "confirmed_low_score": True},
        )  # fmt: skip
    report = calibration_report([run])
    assert report.n_pairs == 12 and report.fitted
    assert report.before["kendall_tau"] == pytest.approx(1.0, abs=0.2)
    assert report.after["mae"] < report.before["mae"]
    # After-figures are held out: 12 pairs, each scored by the map fitted on the 11 others.
    assert (report.folds, report.validation) == (12, "leave-one-out")
    pairs = [
        (qe, score)
        for step in selected_steps(run)
        for target in run.targets
        if (qe := qe_of(step, target)) is not None
        and (score := human_score(step, target)) is not None
    ]
    auto, human = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    held_out = [
        fit_calibration(np.delete(auto, i), np.delete(human, i)).apply(auto[i : i + 1])[0]
        for i in range(12)
    ]
    assert report.after["mae"] == pytest.approx(np.mean(np.abs(np.array(held_out) - human)))
    api = admin_client.get(f"/api/breaker-runs/{run.pk}/humans/").json()["calibration"]
    assert "after" not in api
    assert api["after_cross_validated"] == {**report.after, "folds": 12, "method": "leave-one-out"}
    page = admin_client.get(reverse("search:breaker_calibration", args=[run.pk]))
    html = page.content.decode()
    assert page.status_code == 200 and "QE after calibration" in html
    assert "(cross-validated, leave-one-out)" in html
    assert f"{report.after['mae']:.2f}" in html and "breakpoints (QE → human score)" in html


def test_a_qc_failed_annotator_changes_nothing(
    admin_client, run, django_capture_on_commit_callbacks
):
    send(admin_client, run)
    campaign = Campaign.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        annotate(campaign, hybrid_answer, seconds=0.5)  # far under the minimum time per item
    admin_client.post(reverse("search:breaker_refresh_humans", args=[run.pk]))
    assert all(step.human == {} for step in selected_steps(run))
    assert set(BreakerChain.objects.filter(run=run).values_list("human_quality", flat=True)) == {
        None
    }
    assert all(row.judgments == 0 for row in human_report([run])["rows"])


def test_translations_become_a_human_system_that_is_scored_like_the_others(
    admin_client, run, django_capture_on_commit_callbacks
):
    send(admin_client, run, protocol="translation")
    campaign = Campaign.objects.get()
    assert campaign.protocol == "translation" and campaign.items.count() == 6
    assert campaign.items.filter(target="").count() == 6
    # The annotator works through the pages; answering a whole text takes time, so the time
    # rule (meant for scores) is off for this campaign.
    Campaign.objects.filter(pk=campaign.pk).update(qc_min_seconds_per_item=0)
    translator = enrolled(campaign, "translator")
    client = Client()  # admin_client keeps its own session
    client.force_login(translator.user)
    with django_capture_on_commit_callbacks(execute=True):
        while True:
            location = client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"]
            if "/finish" in location:
                break
            answer = {"translation": f"Lidský překlad {location}"}
            submitted = client.post(f"{location}submit/", {"answer": json.dumps(answer)})
            assert submitted.status_code == 303
    steps = selected_steps(run)
    assert all(list(s.human_translations) == ["Human"] for s in steps)
    assert steps[0].human_translations["Human"]["text"].startswith("Lidský překlad")
    chain = admin_client.get(reverse("search:breaker_chain", args=[run.pk, 0])).content.decode()
    assert "<strong>Human translation:</strong>" in chain

    send(admin_client, run, protocol="esa")
    scoring = Campaign.objects.get(protocol="esa")
    assert scoring.items.count() == 18 and scoring.items.filter(system="Human").count() == 6
    with django_capture_on_commit_callbacks(execute=True):
        annotate(
            scoring,
            lambda i: {"spans": [], "score": 95 if i.system == "Human" else 40,
                       "confirmed_low_score": True},
        )  # fmt: skip
    rows = {row.system: row for row in human_report([run])["rows"]}
    assert rows["Human"].mean_human == 95.0 and rows["Human"].mean_qe is None
    assert rows[FRAGILE].mean_human == 40.0
    # The Human system is no target: the chain's human quality is the targets' mean.
    assert set(BreakerChain.objects.filter(run=run).values_list("human_quality", flat=True)) == {
        40.0
    }
    exported = admin_client.get(f"/annotation/dashboard/{campaign.pk}/export/?format=jsonl")
    lines = [json.loads(x) for x in b"".join(exported.streaming_content).splitlines()]
    assert len(lines) == 6 and lines[0]["translation"].startswith("Lidský překlad")


def test_a_comparison_is_sent_as_one_campaign_and_reported_per_method(
    admin_client, django_capture_on_commit_callbacks
):
    config = {**offline_config(n_steps=2), "methods": ["seeds", "breaker_seeded"]}
    runs = [run_in_foreground(r.pk) for r in start_breaker_comparison(config, enqueue=False)]
    name = runs[0].comparison
    url = reverse("search:breaker_comparison_send") + f"?name={name}"
    assert admin_client.post(url, {"protocol": "mqm", "overlap": "1"}).status_code == 302
    campaign = Campaign.objects.get()
    assert BreakerCampaign.objects.filter(campaign=campaign).count() == 2
    assert {parse_ref(i.origin_ref).run for i in campaign.items.all()} == {r.pk for r in runs}
    with django_capture_on_commit_callbacks(execute=True):
        annotate(campaign, lambda i: {"spans": [{"start": 0, "end": 1, **MISTRANSLATION}]})
    page = admin_client.get(reverse("search:breaker_comparison") + f"?name={name}")
    html = page.content.decode()
    assert "Seeds" in html and "MT-breaker (seeded)" in html and "MQM error categories" in html
    report = human_report(runs)
    assert [row.method for row in report["rows"]] == ["Seeds", "MT-breaker (seeded)"]
    assert all(row.mean_human == 80.0 for row in report["rows"])  # one major error: 100 − 4·5
    calibration = admin_client.get(
        reverse("search:breaker_comparison_calibration") + f"?name={name}"
    )
    assert calibration.status_code == 200


# --- permissions -----------------------------------------------------------------------------


def test_only_staff_may_send_or_read_human_results(client, outsider_user, annotator_user, run):
    for user in (outsider_user, annotator_user):
        client.force_login(user)
        page = send(client, run)
        assert page.status_code == 302 and "/login" in page["Location"]
        for name in ("search:breaker_calibration", "search:breaker_refresh_humans"):
            assert client.get(reverse(name, args=[run.pk])).status_code == 302
        api = client.post(
            f"/api/breaker-runs/{run.pk}/send-to-annotation/",
            {"protocol": "esa"},
            content_type="application/json",
        )
        assert api.status_code == 403
        assert client.get(f"/api/breaker-runs/{run.pk}/humans/").status_code == 403
    assert Campaign.objects.count() == 0 and BreakerCampaign.objects.count() == 0
