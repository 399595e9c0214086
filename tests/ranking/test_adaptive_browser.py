"""The adaptive campaign journey in headless Chromium (issue 42's done-when): an admin creates an
adaptive ESA campaign over three systems from the page, three annotators in their own browser
contexts work through it at the same time, and the campaign closes itself once the top cluster
is settled (screenshots in var/screenshots/).

The data settle quickly and the same way whatever the campaign's random seed: one system is far
better on every segment (90 against 50 and 45), so the top cluster is that system alone once it
has been judged against both others on five segments (the exact paired permutation test's
smallest p-value is 1/32 < 0.05) and three checks agree. Replayed over 100 seeds, ``settle``
stops after 14 to 20 of the 24 judgments.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings

from annotation.models import Annotation, Campaign
from tests.annotation.factories import enrolled
from tests.core.test_csp_browser import Watched
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SYSTEMS = {"alpha": 90, "beta": 50, "gamma": 45}
SEGMENTS = 8


def items_file() -> tuple[bytes, dict[str, int]]:
    """The JSONL upload, and the score the annotators give each target (they know no system)."""
    lines, score_of = [], {}
    for segment in range(SEGMENTS):
        for rank, (system, mean) in enumerate(SYSTEMS.items()):
            target = f"Übersetzung {rank * SEGMENTS + segment + 1} des Satzes."
            score_of[target] = mean + segment % 3
            lines.append(
                {"doc_id": f"doc-{segment}", "seg_id": str(segment), "src_lang": "en",
                 "tgt_lang": "de", "source": f"Sentence {segment} of the test.",
                 "target": target, "system": system}
            )  # fmt: skip
    return "\n".join(json.dumps(line) for line in lines).encode(), score_of


def create_adaptive_campaign(page, upload: bytes) -> None:
    page.set_input_files(
        "input[name=items_file]",
        files=[{"name": "systems.jsonl", "mimeType": "application/jsonl", "buffer": upload}],
    )
    page.fill("input[name=name]", "Three systems, adaptive")
    page.click("summary:has-text('Quality control')")
    page.fill("input[name=qc_min_seconds_per_item]", "0")
    page.click("summary:has-text('Adaptive assignment')")
    page.select_option("select[name=assignment_policy]", "settle")
    page.select_option("select[name=assignment_goal]", "top")
    page.fill("input[name=assignment_alpha]", "0.05")


def judge(page, score: int) -> None:
    """Mark the first word as a minor error, score, submit with Ctrl+Enter."""
    page.keyboard.press("t")
    page.keyboard.press("Enter")
    page.keyboard.press("s")
    page.keyboard.type(str(score))
    page.wait_for_selector("#checklist.ready")
    with page.expect_navigation():  # to the next item, or the notice of a closed campaign
        page.keyboard.press("Control+Enter")


def test_an_adaptive_campaign_closes_itself_once_the_top_cluster_is_settled(browser, live_server):
    UserFactory(username="boss", is_staff=True, is_superuser=True)
    shots = Path(settings.VAR_DIR) / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    upload, score_of = items_file()
    admin = Watched(browser, live_server, "boss")
    admin.open("/annotation/campaigns/new/")
    create_adaptive_campaign(admin.page, upload)
    admin.page.screenshot(path=str(shots / "adaptive_campaign_form.png"), full_page=True)
    with admin.page.expect_navigation():
        admin.page.click("button:has-text('Import and create')")
    campaign = Campaign.objects.get()
    assert (campaign.assignment_policy, campaign.assignment_goal) == ("settle", "top")
    assert admin.page.locator("#adaptive").inner_text().startswith("Adaptive assignment")

    names = ("ann", "bea", "cem")
    for name in names:
        enrolled(campaign, name)
    team = [Watched(browser, live_server, name) for name in names]
    for member in team:  # everyone holds an item before anyone submits
        member.open(f"/annotation/campaigns/{campaign.pk}/next/")
        member.page.wait_for_selector("#target .g")
    rounds = 0
    while campaign.is_open:
        rounds += 1
        assert rounds <= SEGMENTS, "the goal should settle before the items run out"
        for member in team:
            campaign.refresh_from_db()
            if not campaign.is_open:
                break
            shown = member.page.inner_text("#target")  # the text, then a [MISSING] marker
            judge(member.page, score_of[shown[: shown.index(".") + 1]])
    spent = Annotation.objects.filter(status="submitted").count()
    assert spent < len(score_of)
    state = campaign.assignment_state
    assert state["stopped_at"] and state["spent"] == spent and state["saved"] == 24 - spent
    assert [row["system"] for row in state["systems"] if row["cluster"] == 1] == ["alpha"]

    closed = team[0].page.goto(f"{live_server.url}/annotation/campaigns/{campaign.pk}/next/")
    assert closed is not None and "not open for annotation" in team[0].page.content()
    team[0].page.screenshot(path=str(shots / "adaptive_campaign_closed_annotator.png"))
    admin.open(f"/annotation/campaigns/{campaign.pk}/")
    card = admin.page.locator("#adaptive").inner_text()
    assert "goal settled" in card and f"after {spent} judgments" in card
    assert f"{24 - spent} saved" in card
    admin.page.screenshot(path=str(shots / "adaptive_campaign_settled.png"), full_page=True)
    for watched in (admin, *team):
        watched.assert_clean()
