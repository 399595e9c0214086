"""Only staff with the curation permission reach challenge sets: pages, API and downloads.

Everybody else — annotators, outsiders, staff without the permission — gets a 404 on pages and
downloads (a set's existence does not leak), 403 from the API, and nothing changes.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from challenge_sets import validation
from challenge_sets.models import AuditEntry, ChallengeItem, ChallengeSet
from challenge_sets.versions import freeze_version
from core.navigation import areas_for
from tests.challenge_sets.conftest import ROWS, judge, make_set
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def frozen(curator):
    challenge_set = make_set(rows=ROWS[2:], overlap=1)
    validation.send_for_validation(challenge_set)
    judge(challenge_set.campaign, "rater", score=10)
    validation.refresh_results(challenge_set)
    item = ChallengeItem.objects.get(challenge_set=challenge_set)
    from challenge_sets.services import decide_items

    decide_items(challenge_set, [item.pk], "accepted")
    freeze_version(challenge_set, user=curator)
    return challenge_set, item


def _pages(challenge_set, item):
    pk = challenge_set.pk
    return [
        reverse("challenge_sets:index"),
        reverse("challenge_sets:set_new"),
        reverse("challenge_sets:set_detail", args=[pk]),
        reverse("challenge_sets:difficulty_chart", args=[pk]),
        reverse("challenge_sets:item_detail", args=[pk, item.pk]),
        reverse("challenge_sets:download", args=[pk, 1, "jsonl"]),
        reverse("challenge_sets:download", args=[pk, 1, "hf"]),
    ]


def _posts(challenge_set, item):
    pk = challenge_set.pk
    return [
        (reverse("challenge_sets:set_new"), {"name": "stolen", "licence": "x", "protocol": "esa"}),
        (reverse("challenge_sets:send", args=[pk]), {}),
        (reverse("challenge_sets:refresh", args=[pk]), {}),
        (reverse("challenge_sets:freeze", args=[pk]), {}),
        (reverse("challenge_sets:decide", args=[pk]), {"items": item.pk, "status": "rejected",
                                                       "reason": "x"}),
        (reverse("challenge_sets:add_from_source", args=[pk, "jsonl"]), {}),
    ]  # fmt: skip


def _state():
    return (ChallengeSet.objects.count(), AuditEntry.objects.count(),
            list(ChallengeItem.objects.values_list("status", flat=True)),
            sum(s.versions.count() for s in ChallengeSet.objects.all()))  # fmt: skip


@pytest.mark.parametrize("who", ["annotator", "outsider", "staff_without_permission"])
def test_nobody_else_reaches_anything(client, frozen, who):
    challenge_set, item = frozen
    user = UserFactory(username=who, is_staff=who.startswith("staff"))
    client.force_login(user)
    before = _state()
    for url in _pages(challenge_set, item):
        assert client.get(url).status_code == 404, url
    for url, data in _posts(challenge_set, item):
        assert client.post(url, data).status_code == 404, url
    api = f"/api/challenge-sets/{challenge_set.pk}/"
    for url in ("/api/challenge-sets/", api, api + "items/", api + "versions/",
                api + "versions/1/export/"):  # fmt: skip
        assert client.get(url).status_code == 403, url
    assert client.post("/api/challenge-sets/", {"name": "x"}).status_code == 403
    assert client.post(api + "decide/", {"items": [item.pk], "status": "rejected",
                                         "reason": "x"}).status_code == 403  # fmt: skip
    assert _state() == before
    assert "Challenge sets" not in [area.label for area in areas_for(user)]


def test_anonymous_visitors_are_sent_to_log_in(client, frozen):
    challenge_set, item = frozen
    for url in _pages(challenge_set, item):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert client.get("/api/challenge-sets/").status_code in (401, 403)


def test_a_curator_granted_through_a_group_reaches_everything(curator_client, curator, frozen):
    challenge_set, item = frozen
    for url in _pages(challenge_set, item):
        assert curator_client.get(url).status_code == 200, url
    assert curator_client.get(f"/api/challenge-sets/{challenge_set.pk}/").status_code == 200
    assert "Challenge sets" in [area.label for area in areas_for(curator)]
