"""REST API of difficulty datasets and DEC evaluations: who may use it, import, build from a
campaign, segments, start, cancel and results, and a full round trip."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from difficulty import services
from difficulty.models import DifficultyDataset, DifficultyEvaluation
from tests.annotation.campaign_builders import (
    choice_campaign,
    esa_answer,
    esa_campaign,
    make_annotator,
    work,
)
from tests.databases import API_THROTTLE_QUERIES
from tests.difficulty.test_difficulty_import import line, nothing_written
from tests.difficulty.test_difficulty_pages import jsonl

pytestmark = pytest.mark.django_db

DATASETS = "/api/difficulty-datasets/"
EVALUATIONS = "/api/difficulty-evaluations/"


@pytest.fixture
def api(admin_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


@pytest.fixture
def dataset(db) -> DifficultyDataset:
    return services.import_difficulty_dataset(jsonl().splitlines(), name="tiny")


def upload(content: bytes, name: str = "data.jsonl") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/jsonl")


def start_body(target: DifficultyDataset, **overrides) -> dict:
    body = {"dataset": target.pk, "estimators": ["length", "random"], "n_bootstrap": 20}
    return body | overrides


# --- Permissions ---------------------------------------------------------------------------


@pytest.mark.parametrize("persona", ["anonymous", "annotator_user", "outsider_user"])
def test_only_staff_may_use_it(request, persona, dataset):
    evaluation = services.start_difficulty_evaluation(dataset, ["length"], enqueue=False)
    client = APIClient()
    if persona != "anonymous":
        client.force_authenticate(request.getfixturevalue(persona))
    reads = [
        DATASETS,
        f"{DATASETS}{dataset.pk}/",
        f"{DATASETS}{dataset.pk}/segments/",
        f"{DATASETS}{dataset.pk}/export/",
        EVALUATIONS,
        f"{EVALUATIONS}{evaluation.pk}/",
        f"{EVALUATIONS}{evaluation.pk}/results/",
    ]
    for path in reads:
        response = client.get(path)
        assert response.status_code == 403, path
        assert "tiny" not in response.content.decode()
    writes = [
        client.post(f"{DATASETS}import/", {"name": "sneaky", "file": upload(jsonl())}),
        client.post(f"{DATASETS}from-campaign/", {"campaign": 1, "name": "x"}, format="json"),
        client.post(EVALUATIONS, start_body(dataset), format="json"),
        client.post(f"{EVALUATIONS}{evaluation.pk}/cancel/"),
    ]

    assert [r.status_code for r in writes] == [403, 403, 403, 403]
    assert list(DifficultyDataset.objects.values_list("name", flat=True)) == ["tiny"]
    assert list(DifficultyEvaluation.objects.values_list("status", flat=True)) == ["queued"]


def test_unknown_ids_are_404(api):
    assert api.get(f"{DATASETS}999/").status_code == 404
    assert api.get(f"{DATASETS}999/segments/").status_code == 404
    assert api.get(f"{EVALUATIONS}999/").status_code == 404
    assert api.post(f"{EVALUATIONS}999/cancel/").status_code == 404
    assert api.get(f"{EVALUATIONS}999/results/").status_code == 404


# --- Datasets ------------------------------------------------------------------------------


def test_list_is_paginated_with_counts(api, dataset, django_assert_max_num_queries):
    services.start_difficulty_evaluation(dataset, ["length"], enqueue=False)
    for n in range(4):
        services.import_difficulty_dataset(jsonl(2).splitlines(), name=f"more-{n}")

    with django_assert_max_num_queries(
        4 + API_THROTTLE_QUERIES
    ):  # does not grow with the number of datasets
        listing = api.get(DATASETS).json()

    assert listing["count"] == 5
    assert [row["name"] for row in listing["results"]] == [
        "more-3",
        "more-2",
        "more-1",
        "more-0",
        "tiny",
    ]
    tiny = listing["results"][-1]
    assert tiny["origin"] == "import"
    assert (tiny["n_segments"], tiny["n_language_pairs"], tiny["n_systems"]) == (12, 1, 3)
    assert tiny["n_evaluations"] == 1
    assert tiny["extra_fields"] == ["comet"]
    assert "language_pairs" not in tiny  # lists stay light
    assert tiny["links"]["page"] == f"http://testserver/difficulty/{dataset.pk}/"
    assert tiny["links"]["segments"] == f"http://testserver{DATASETS}{dataset.pk}/segments/"


def test_retrieve_shows_language_pairs_systems_and_estimators(api, dataset):
    data = api.get(f"{DATASETS}{dataset.pk}/").json()

    assert data["name"] == "tiny"
    assert data["reference_rule"] == {"names": ["refA", "refB"], "prefixes": ["ref", "human"]}
    assert data["perfect_score"] == 100.0
    assert data["n_evaluations"] == 0
    (pair,) = data["language_pairs"]
    assert (pair["code"], pair["src_lang"], pair["tgt_lang"], pair["n_segments"]) == (
        "en-cs",
        "en",
        "cs",
        12,
    )
    assert (pair["n_evaluated"], pair["n_references"], pair["n_cells"]) == (2, 1, 24)
    assert [(s["name"], s["column"], s["is_reference"]) for s in pair["systems"]] == [
        ("refA", 0, True),
        ("sysA", 1, False),
        ("sysB", 2, False),
    ]
    assert pair["systems"][0]["mean_score"] == 100.0
    options = {o["name"]: o for o in data["estimator_options"]}
    assert options["length"]["available"] is True
    assert options["metric:comet"]["available"] is True


def test_segments_are_paginated_and_filtered_by_language_pair(api, dataset):
    page = api.get(f"{DATASETS}{dataset.pk}/segments/").json()

    assert page["count"] == 12
    first = page["results"][0]
    assert (first["language_pair"], first["row"], first["line_number"]) == ("en-cs", 0, 1)
    assert first["segment_key"] == "0"
    assert first["source"] == "word <b>bold</b>"
    assert first["scores"] == {"sysA": 100.0, "sysB": 100.0, "refA": 100.0}
    assert first["extra"] == {"comet": 0.9}
    assert api.get(f"{DATASETS}{dataset.pk}/segments/", {"lp": "de-en"}).json()["count"] == 0
    assert api.get(f"{DATASETS}{dataset.pk}/segments/", {"lp": "en-cs"}).json()["count"] == 12


def test_import_a_file(api, admin_user):
    response = api.post(
        f"{DATASETS}import/",
        {
            "name": "mine",
            "description": "from the API",
            "file": upload(jsonl(8), "mine.jsonl"),
            "reference_systems": "refA",
            "reference_prefixes": "",
            "perfect_score": "100",
        },
    )

    assert response.status_code == 201, response.content
    dataset = DifficultyDataset.objects.get(name="mine")
    assert response.json()["id"] == dataset.pk
    assert response.json()["language_pairs"][0]["n_segments"] == 8
    assert (dataset.n_segments, dataset.source_file_name) == (8, "mine.jsonl")
    assert dataset.description == "from the API"
    assert dataset.reference_rule == {"names": ["refA"], "prefixes": []}
    assert dataset.created_by == admin_user


def test_import_with_a_bad_line_names_it_and_writes_nothing(api):
    content = jsonl(3) + b'\n{"langs": "en-cs", "src": "x", "scores": {"a": "high"}}\n'

    response = api.post(f"{DATASETS}import/", {"name": "bad", "file": upload(content)})

    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == "line 4: score of 'a' must be a number or null, got 'high'"
    assert body["errors"] == [body["detail"]]
    assert nothing_written()


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (line(scores={"a": float("nan")}), "line 2: not valid JSON (NaN at $.scores.a is not"),
        (line(comet=float("nan")), "line 2: not valid JSON (NaN at $.comet is not"),
        ("{not json", "line 2: not valid JSON"),
    ],
)
def test_import_refuses_nan_and_broken_lines(api, bad, message):
    content = "\n".join([line(line_id=1), bad]).encode()

    response = api.post(f"{DATASETS}import/", {"name": "bad", "file": upload(content)})

    assert response.status_code == 400
    assert response.json()["detail"].startswith(message)
    assert nothing_written()


def test_import_refuses_bad_fields_and_a_taken_name(api, dataset):
    missing_file = api.post(f"{DATASETS}import/", {"name": "x"})
    nan_perfect = api.post(
        f"{DATASETS}import/", {"name": "x", "file": upload(jsonl()), "perfect_score": "nan"}
    )
    taken = api.post(f"{DATASETS}import/", {"name": "tiny", "file": upload(jsonl())})
    as_json = api.post(f"{DATASETS}import/", {"name": "x", "file": "text"}, format="json")

    assert missing_file.status_code == 400
    assert list(missing_file.json()) == ["detail", "file"]
    assert nan_perfect.status_code == 400
    assert list(nan_perfect.json()) == ["detail", "perfect_score"]
    assert taken.status_code == 400
    assert taken.json() == {"detail": "a difficulty dataset named 'tiny' exists already"}
    assert as_json.status_code == 400
    assert list(DifficultyDataset.objects.values_list("name", flat=True)) == ["tiny"]


def test_build_a_dataset_from_a_campaign(api):
    campaign = esa_campaign(overlap=1)
    work(make_annotator("alice"), campaign, lambda item: esa_answer(70))

    response = api.post(
        f"{DATASETS}from-campaign/",
        {"campaign": campaign.pk, "name": "from ESA", "description": "pilot"},
        format="json",
    )

    assert response.status_code == 201, response.content
    data = response.json()
    assert data["origin"] == "campaign"
    assert (data["source_campaign_id"], data["source_campaign_name"]) == (campaign.pk, "ESA demo")
    assert data["description"].startswith("pilot\n\nBuilt from campaign 'ESA demo'")
    assert data["n_segments"] == 3
    assert [s["name"] for s in data["language_pairs"][0]["systems"]] == ["sysA", "sysB"]


def test_a_campaign_without_scores_is_refused(api):
    choice = choice_campaign()
    unscored = esa_campaign("Nobody yet")

    wrong_protocol = api.post(
        f"{DATASETS}from-campaign/", {"campaign": choice.pk, "name": "x"}, format="json"
    )
    empty = api.post(
        f"{DATASETS}from-campaign/", {"campaign": unscored.pk, "name": "x"}, format="json"
    )

    assert wrong_protocol.status_code == 400
    assert list(wrong_protocol.json()) == ["detail", "campaign"]
    assert empty.status_code == 400
    assert empty.json() == {
        "detail": "campaign 'Nobody yet' has no regular item with a submitted score yet"
    }
    assert nothing_written()


# --- Evaluations ---------------------------------------------------------------------------


def test_start_queues_the_first_round(
    api, admin_user, dataset, sent_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            EVALUATIONS,
            start_body(dataset, subset_fraction=0.5, seed=7, include_references=True),
            format="json",
        )

    assert response.status_code == 201, response.content
    evaluation = DifficultyEvaluation.objects.get()
    assert sent_tasks == [
        (
            "difficulty.advance_evaluation",
            (evaluation.pk,),
            {"queue": settings.CELERY_TASK_DEFAULT_QUEUE, "countdown": None},
        )
    ]
    data = response.json()
    assert data["id"] == evaluation.pk
    assert (data["dataset"], data["dataset_name"]) == (dataset.pk, "tiny")
    assert data["estimators"] == ["length", "random"]
    assert data["settings"] == {
        "subset_fraction": 0.5,
        "seed": 7,
        "n_bootstrap": 20,
        "include_references": True,
    }
    assert data["status"] == "queued"
    assert data["progress"] == {"done": 0, "total": evaluation.progress_total, "percent": 0}
    assert (data["is_finished"], data["error"], data["created_by"]) == (False, "", "admin")
    assert data["links"]["results"] == f"http://testserver{EVALUATIONS}{evaluation.pk}/results/"
    assert evaluation.created_by == admin_user


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"estimators": ["length", "nope"]}, {"detail": "unknown estimator 'nope'"}),
        ({"estimators": ["metric:bleu"]}, {"detail": "metric:bleu: the dataset has no extra"}),
        ({"estimators": ["length", "length"]}, {"detail": "an estimator is listed twice"}),
        ({"estimators": []}, {"estimators": ""}),
        ({"subset_fraction": 0}, {"subset_fraction": ""}),
        ({"subset_fraction": "NaN"}, {"subset_fraction": ""}),
        ({"n_bootstrap": 10_001}, {"n_bootstrap": ""}),
        ({"dataset": 999}, {"dataset": ""}),
    ],
)
def test_a_refused_configuration_is_400_and_queues_nothing(
    api, dataset, sent_tasks, django_capture_on_commit_callbacks, overrides, error
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(EVALUATIONS, start_body(dataset, **overrides), format="json")

    assert response.status_code == 400
    ((key, start),) = error.items()
    body = response.json()
    assert list(body) == (["detail"] if key == "detail" else ["detail", key])
    assert (body[key] if key == "detail" else body[key][0]).startswith(start)
    assert not DifficultyEvaluation.objects.exists()
    assert sent_tasks == []


def test_list_filters_by_dataset(api, dataset):
    other = services.import_difficulty_dataset(jsonl(4).splitlines(), name="other")
    first = services.start_difficulty_evaluation(dataset, ["length"], enqueue=False)
    second = services.start_difficulty_evaluation(other, ["length"], enqueue=False)

    everything = api.get(EVALUATIONS).json()
    only_other = api.get(EVALUATIONS, {"dataset": other.pk}).json()

    assert [row["id"] for row in everything["results"]] == [second.pk, first.pk]
    assert [row["id"] for row in only_other["results"]] == [second.pk]


def test_cancel_stops_an_unfinished_evaluation_once(api, dataset):
    evaluation = services.start_difficulty_evaluation(dataset, ["length"], enqueue=False)

    cancelled = api.post(f"{EVALUATIONS}{evaluation.pk}/cancel/")
    again = api.post(f"{EVALUATIONS}{evaluation.pk}/cancel/")

    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["is_finished"] is True
    assert again.status_code == 409
    assert again.json() == {
        "detail": "the evaluation is cancelled: there is nothing to cancel",
        "status": "cancelled",
    }
    results = api.get(f"{EVALUATIONS}{evaluation.pk}/results/")
    assert results.status_code == 409
    assert results.json()["status"] == "cancelled"


def test_results_wait_for_the_evaluation_to_finish(api, dataset):
    evaluation = services.start_difficulty_evaluation(dataset, ["length"], enqueue=False)

    response = api.get(f"{EVALUATIONS}{evaluation.pk}/results/")

    assert response.status_code == 409
    assert response.json() == {
        "detail": "the evaluation is queued; results exist once it is done",
        "status": "queued",
    }


def test_round_trip_import_start_run_results(api, sent_tasks, django_capture_on_commit_callbacks):
    imported = api.post(f"{DATASETS}import/", {"name": "trip", "file": upload(jsonl())})
    assert imported.status_code == 201
    dataset_id = imported.json()["id"]
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(
            EVALUATIONS,
            {
                "dataset": dataset_id,
                "estimators": ["length", "oracle-src", "metric:comet"],
                "n_bootstrap": 50,
            },
            format="json",
        )
    assert started.status_code == 201
    pk = started.json()["id"]
    assert [args for _name, args, _options in sent_tasks] == [(pk,)]

    services.run_difficulty_evaluation(pk)  # what the queued rounds would do

    detail = api.get(f"{EVALUATIONS}{pk}/").json()
    assert detail["status"] == "done"
    assert detail["progress"]["percent"] == 100
    assert detail["progress"]["done"] == detail["progress"]["total"]
    response = api.get(f"{EVALUATIONS}{pk}/results/")
    assert response.status_code == 200
    results = response.json()
    assert results == DifficultyEvaluation.objects.get(pk=pk).results
    assert list(results["estimators"]) == ["length", "oracle-src", "metric:comet"]
    for name in ("length", "oracle-src", "metric:comet"):
        row = results["estimators"][name]
        assert set(row) == {"rank", "dec", "dec_per_lp", "pearson", "avg_score", "pct_perfect"}
        assert -1.0 <= row["dec"] <= 1.0
        low, high = results["details"][name]["dec_ci"]
        assert low <= high
        assert results["details"][name]["n_bootstrap"] == 50
    assert results["settings"]["n_bootstrap"] == 50
    assert results["dataset"]["name"] == "trip"
    clusters = results["significance"]  # the estimators' ranks, as on the page
    assert clusters["method"] == "PERM-BOTH"
    assert sorted(clusters["order"]) == sorted(results["estimators"])
    ranks = dict(zip(clusters["order"], clusters["ranks"], strict=True))
    assert ranks == {name: row["rank"] for name, row in results["estimators"].items()}
    assert api.get(f"{DATASETS}{dataset_id}/").json()["n_evaluations"] == 1


def test_the_schema_describes_the_endpoints(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()
    paths = schema["paths"]

    upload_body = paths[f"{DATASETS}import/"]["post"]["requestBody"]["content"]
    assert list(upload_body) == ["multipart/form-data"]
    start = paths[EVALUATIONS]["post"]
    assert set(start["responses"]) == {"201", "400"}
    results = paths[EVALUATIONS + "{id}/results/"]["get"]["responses"]
    assert set(results) == {"200", "409"}
    assert "EvaluationResults" in json.dumps(results["200"])
    significance = schema["components"]["schemas"]["Significance"]["properties"]
    assert {"method", "order", "ranks", "p_values", "per_lp"} <= set(significance)
