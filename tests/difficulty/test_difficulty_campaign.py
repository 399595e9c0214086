"""A difficulty dataset built from an annotation campaign's submitted ESA scores, then DEC."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from annotation.services.campaigns import create_campaign
from difficulty import services
from difficulty.models import DifficultyDataset, DifficultyEvaluation
from difficulty.selectors import estimator_options
from tests.annotation.campaign_builders import choice_campaign, esa_answer, make_annotator, work

pytestmark = pytest.mark.django_db

SOURCES = [
    "Short one.",
    "A somewhat longer sentence about the weather.",
    "Tiny.",
    "The committee postponed its decision on the proposed amendments until next spring.",
    "Good news for everyone.",
    "An exceptionally convoluted, subordinate-clause-laden sentence that keeps going and going.",
]
SYSTEMS = ["sysA", "sysB", "refA"]


def score_of(item, annotator_name: str) -> int:
    """Deterministic scores: longer sources score lower; annotators and systems differ a bit."""
    base = 100 - len(item.source) // 2
    return max(
        0, base - (3 if annotator_name == "bob" else 0) - (5 if item.system == "sysB" else 0)
    )


@pytest.fixture
def campaign():
    items = [
        {
            "doc_id": "doc-1",
            "seg_id": str(i),
            "source": source,
            "target": f"{system} translation of {i}",
            "system": system,
        }
        for i, source in enumerate(SOURCES)
        for system in SYSTEMS
    ]
    campaign = create_campaign(
        "Difficulty ESA", "esa", items, src_lang="en", tgt_lang="cs", overlap=2
    )
    for name in ("alice", "bob"):
        annotator = make_annotator(name)
        work(annotator, campaign, lambda item, name=name: esa_answer(score_of(item, name)))
    return campaign


def test_build_from_a_campaign_and_evaluate(campaign):
    dataset = services.build_difficulty_dataset_from_campaign(campaign, name="from-campaign")

    assert dataset.origin == DifficultyDataset.Origin.CAMPAIGN
    assert (dataset.source_campaign_id, dataset.source_campaign_name) == (
        campaign.pk,
        "Difficulty ESA",
    )
    assert "when 18 of 18 items had all their annotations" in dataset.description
    pair = dataset.language_pairs.get()
    assert (pair.code, pair.n_segments) == ("en-cs", 6)
    systems = list(pair.systems.order_by("column"))
    assert [(s.name, s.is_reference) for s in systems] == [
        ("refA", True),
        ("sysA", False),
        ("sysB", False),
    ]
    items = {(i.seg_id, i.system): i for i in campaign.items.all()}
    expected = np.array(
        [
            [
                np.mean([score_of(items[(str(row), s.name)], who) for who in ("alice", "bob")])
                for s in systems
            ]
            for row in range(6)
        ]
    )
    assert np.array_equal(pair.score_matrix(), expected)

    evaluation = services.start_difficulty_evaluation(
        dataset, ["chars"], n_bootstrap=0, enqueue=False
    )
    results = services.run_difficulty_evaluation(evaluation.pk).results

    estimate = [-len(source) for source in SOURCES]
    tau = np.mean([stats.kendalltau(estimate, expected[:, j]).statistic for j in (1, 2)])
    assert results["estimators"]["chars"]["dec"] == pytest.approx(tau)


def test_unscored_items_are_skipped(db):
    items = [
        {"doc_id": "d", "seg_id": str(i), "source": f"Sentence {i}.", "target": "x", "system": "s"}
        for i in range(4)
    ]
    campaign = create_campaign("Half done", "esa", items, src_lang="en", tgt_lang="de", overlap=1)
    scores = iter([80, 60])

    def answer(item):
        score = next(scores, None)
        return None if score is None else esa_answer(score)

    work(make_annotator("carol"), campaign, answer)

    dataset = services.build_difficulty_dataset_from_campaign(campaign, name="half")

    assert dataset.n_segments == 2
    assert "when 2 of 4 items had all their annotations" in dataset.description


def test_choice_campaigns_and_empty_campaigns_are_refused(db):
    with pytest.raises(services.DifficultyDatasetError, match="choice protocol, which has no"):
        services.build_difficulty_dataset_from_campaign(choice_campaign(), name="x")
    empty = create_campaign(
        "Nobody yet",
        "esa",
        [{"doc_id": "d", "seg_id": "1", "source": "Hi.", "target": "Hallo.", "system": "s"}],
        src_lang="en",
        tgt_lang="de",
    )
    with pytest.raises(services.DifficultyDatasetError, match="no regular item with a submitted"):
        services.build_difficulty_dataset_from_campaign(empty, name="x")
    assert not DifficultyDataset.objects.exists()


def test_only_annotators_who_pass_qc_count_and_the_refusal_says_why(db):
    items = [
        {"doc_id": "d", "seg_id": str(i), "source": f"Sentence {i}.", "target": "x", "system": "s"}
        for i in range(4)
    ]
    campaign = create_campaign(
        "Fast and careful", "esa", items, src_lang="en", tgt_lang="de", overlap=2
    )
    # 4 of 4 items under the campaign's 3 s: fails QC once finished (the dashboard's verdict).
    work(make_annotator("speedy"), campaign, lambda item: esa_answer(0), seconds=1)

    with pytest.raises(services.DifficultyDatasetError) as refused:
        services.build_difficulty_dataset_from_campaign(campaign, name="x")
    assert str(refused.value) == (
        "campaign 'Fast and careful' has no regular item scored by an annotator who passes "
        "quality control yet (4 items have only scores of annotators whose verdict is fail or "
        "pending)"
    )
    assert not DifficultyDataset.objects.exists()

    work(make_annotator("careful"), campaign, lambda item: esa_answer(70))
    dataset = services.build_difficulty_dataset_from_campaign(campaign, name="careful only")
    pair = dataset.language_pairs.get()
    assert np.array_equal(pair.score_matrix(), np.full((4, 1), 70.0))


def test_build_from_the_page(admin_client, campaign):
    page = admin_client.get("/difficulty/from-campaign/")
    response = admin_client.post(
        "/difficulty/from-campaign/",
        {
            "campaign": campaign.pk,
            "name": "via-ui",
            "reference_systems": "refA",
            "reference_prefixes": "",
        },
    )

    dataset = DifficultyDataset.objects.get(name="via-ui")
    assert "Difficulty ESA (ESA, open)" in page.content.decode()
    assert response.status_code == 302
    assert response["Location"] == f"/difficulty/{dataset.pk}/"
    assert dataset.n_segments == 6
    assert not DifficultyEvaluation.objects.exists()


def test_campaign_provenance_fields_are_neither_offered_nor_accepted(campaign):
    dataset = services.build_difficulty_dataset_from_campaign(campaign, name="provenance")

    offered = {option.name for option in estimator_options(dataset)}
    assert {"length", "rarity"} <= offered
    assert not {name for name in offered if name.startswith("metric:")}
    for field in ("item_ids", "n_annotations"):
        with pytest.raises(services.DifficultyDatasetError) as error:
            services.start_difficulty_evaluation(dataset, [f"metric:{field}"], enqueue=False)
        assert str(error.value) == (
            f"metric:{field}: {field!r} records where the campaign's scores came from "
            "(item ids, judgments averaged), it estimates nothing"
        )
    assert not DifficultyEvaluation.objects.exists()
