"""The field's releases, ranked (issue 41, "Done when"): the mt-metrics-eval sample into
clusters from the command, and the WMT22 lv-en crowd-DA sample into the clusters WMT published
(``clusters-lv-en.csv``) from the API and the page."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from difficulty.services import import_difficulty_path
from ranking import services
from ranking.models import SystemRanking

pytestmark = pytest.mark.django_db


def published_clusters(path) -> tuple[list[str], list[int], list[tuple[int, int]]]:
    """(systems in order, wins, each system's cluster as its (first, last) rank)."""
    rows = [line.split() for line in path.read_text().splitlines()[1:] if line.strip()]
    return [r[7] for r in rows], [int(r[2]) for r in rows], [(int(r[4]), int(r[5])) for r in rows]


def test_the_mtme_sample_ranks_into_clusters_from_the_command(shared_data):
    folder = shared_data / "ranking" / "wmt22-mtme-zhen"
    import_difficulty_path(folder, name="WMT22 zh-en", human_score="mqm", perfect_score=0)
    out = io.StringIO()
    call_command("rank_systems", "--dataset", "WMT22 zh-en", "--score", "mqm", "--format", "json",
                 stdout=out)  # fmt: skip
    result = json.loads(out.getvalue())["ranking"]
    official = {}
    for line in (folder / "human-score_sd" / "zh-en.mqm.sys.score").read_text().splitlines():
        system, score = line.split("\t")
        if score != "None" and system not in ("refA", "refB"):  # references are left out
            official[system] = float(score)
    assert result["systems"] == sorted(official, key=official.__getitem__, reverse=True)
    assert result["means"] == pytest.approx(sorted(official.values(), reverse=True), abs=1e-9)
    assert result["n_segments"] == [1875] * 14
    # Lan-Bridge and bleurt_bestmbr share the top cluster; M2M100 is alone at the bottom.
    assert result["clusters"] == [1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 4, 5]


def test_the_wmt22_lv_en_sample_gets_wmts_published_clusters_from_the_api_and_the_page(
    shared_data, admin_client, admin_user
):
    folder = shared_data / "ranking" / "wmt22-da-lven"
    dataset = import_difficulty_path(folder, name="WMT22 lv-en DA")
    systems, wins, spans = published_clusters(folder / "clusters-lv-en.csv")
    api = APIClient()
    api.force_authenticate(admin_user)
    created = api.post(
        "/api/rankings/", {"input_kind": "dataset", "dataset": dataset.pk, "test": "ranksum"},
        format="json",
    )  # fmt: skip
    assert created.status_code == 201, created.json()
    from_page = admin_client.post(
        reverse("ranking:ranking_new"),
        {"input_kind": "dataset", "dataset": dataset.pk, "score": "human", "test": "ranksum",
         "pairs": "all", "n_resamples": 1000, "alpha": 0.05, "seed": 0},
    )  # fmt: skip
    assert from_page.status_code == 302
    for ranking in SystemRanking.objects.all():
        services.run_in_foreground(ranking.pk)
        result = api.get(f"/api/rankings/{ranking.pk}/").json()["result"]["ranking"]
        assert result["systems"] == systems
        assert result["wins"] == wins
        # Same cluster <=> same published (CLUSTER_START, CLUSTER_END).
        assert result["clusters"] == [sorted(set(spans)).index(span) + 1 for span in spans]
        assert result["clusters"] == [1, 1, 1, 1, 2]
