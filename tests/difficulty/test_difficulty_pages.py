"""Difficulty pages: who may see them, upload, evaluate, htmx progress, results and charts."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from difficulty import services
from difficulty.models import DifficultyDataset, DifficultyEvaluation, DifficultySegment

pytestmark = pytest.mark.django_db


def jsonl(n: int = 12) -> bytes:
    rows = []
    for i in range(n):
        rows.append(
            {
                "langs": "en-cs",
                "line_id": i,
                "doc_id": f"doc{i // 4}",
                "src": "word " * (i + 1) + "<b>bold</b>",
                "tgt": {"sysA": "slovo", "sysB": "slovo", "refA": "slovo"},
                "scores": {"sysA": 100 - 5 * i, "sysB": 100 - 3 * (i % 5), "refA": 100},
                "comet": 0.9 - i / 100,
            }
        )
    return "\n".join(json.dumps(r) for r in rows).encode()


@pytest.fixture
def dataset(db) -> DifficultyDataset:
    return services.import_difficulty_dataset(jsonl().splitlines(), name="tiny")


@pytest.fixture
def finished(dataset) -> DifficultyEvaluation:
    evaluation = services.start_difficulty_evaluation(
        dataset, ["length", "random", "oracle-src"], n_bootstrap=20, enqueue=False
    )
    return services.run_difficulty_evaluation(evaluation.pk)


def pages(dataset: DifficultyDataset, evaluation: DifficultyEvaluation) -> list[str]:
    return [
        "/difficulty/",
        "/difficulty/upload/",
        "/difficulty/from-campaign/",
        f"/difficulty/{dataset.pk}/",
        f"/difficulty/{dataset.pk}/segments/",
        f"/difficulty/{dataset.pk}/scores.svg",
        f"/difficulty/evaluations/{evaluation.pk}/",
        f"/difficulty/evaluations/{evaluation.pk}/chart.svg",
    ]


def test_annotators_and_anonymous_users_see_nothing(client, annotator_client, dataset, finished):
    for path in pages(dataset, finished):
        response = annotator_client.get(path)
        assert response.status_code == 302, path
        assert "/admin/login/" in response["Location"]
        assert b"tiny" not in response.content
    annotator_client.logout()
    for path in pages(dataset, finished):
        assert client.get(path).status_code == 302, path


def test_annotators_cannot_upload_evaluate_or_cancel(annotator_client, dataset):
    evaluation = services.start_difficulty_evaluation(dataset, ["length"], enqueue=False)
    upload = SimpleUploadedFile("x.jsonl", jsonl())

    responses = [
        annotator_client.post("/difficulty/upload/", {"name": "sneaky", "file": upload}),
        annotator_client.post(f"/difficulty/{dataset.pk}/evaluate/", {"estimators": ["length"]}),
        annotator_client.post(f"/difficulty/evaluations/{evaluation.pk}/cancel/"),
    ]

    assert [r.status_code for r in responses] == [302, 302, 302]
    assert list(DifficultyDataset.objects.values_list("name", flat=True)) == ["tiny"]
    assert DifficultyEvaluation.objects.get().status == DifficultyEvaluation.Status.QUEUED


def test_the_difficulty_area_is_in_the_staff_navigation_only(admin_client, annotator_user):
    assert b'href="/difficulty/"' in admin_client.get("/dashboard/").content
    other = Client()
    other.force_login(annotator_user)
    assert b'href="/difficulty/"' not in other.get("/", follow=True).content


def test_admin_pages_render(admin_client, dataset, finished, django_assert_max_num_queries):
    for path in pages(dataset, finished):
        response = admin_client.get(path)
        assert response.status_code == 200, path
    for n in range(5):
        services.import_difficulty_dataset(jsonl(2).splitlines(), name=f"more-{n}")
    with django_assert_max_num_queries(8):  # does not grow with the number of datasets
        listing = admin_client.get("/difficulty/")
    assert b"tiny" in listing.content and b"more-4" in listing.content
    detail = admin_client.get(f"/difficulty/{dataset.pk}/").content.decode()
    assert "en-cs" in detail
    assert "human reference" in detail  # refA is listed, marked
    assert 'value="metric:comet"' in detail  # a numeric extra field is offered
    assert (
        "&lt;b&gt;bold&lt;/b&gt;"
        in admin_client.get(f"/difficulty/{dataset.pk}/segments/").content.decode()
    )
    svg = admin_client.get(f"/difficulty/{dataset.pk}/scores.svg")
    assert svg["Content-Type"] == "image/svg+xml"
    assert svg.content.startswith(b"<?xml")


def test_upload_imports_a_file(admin_client):
    upload = SimpleUploadedFile("mine.jsonl", jsonl(8))

    response = admin_client.post(
        "/difficulty/upload/",
        {
            "name": "mine",
            "file": upload,
            "reference_systems": "refA",
            "reference_prefixes": "",
            "perfect_score": "100",
        },
    )

    dataset = DifficultyDataset.objects.get(name="mine")
    assert response.status_code == 302
    assert response["Location"] == f"/difficulty/{dataset.pk}/"
    assert dataset.n_segments == 8
    assert dataset.source_file_name == "mine.jsonl"
    assert dataset.reference_rule == {"names": ["refA"], "prefixes": []}


def test_upload_with_a_bad_line_shows_it_and_writes_nothing(admin_client):
    content = jsonl(3) + b'\n{"langs": "en-cs", "src": "x", "scores": {"a": "high"}}\n'
    upload = SimpleUploadedFile("bad.jsonl", content)

    response = admin_client.post(
        "/difficulty/upload/", {"name": "bad", "file": upload, "perfect_score": "100"}
    )

    assert response.status_code == 400
    assert "line 4: score of &#x27;a&#x27; must be a number or null" in response.content.decode()
    assert "Nothing was written." in response.content.decode()
    assert not DifficultyDataset.objects.exists()
    assert not DifficultySegment.objects.exists()


def test_evaluate_queues_a_round_after_commit(
    admin_client, dataset, django_capture_on_commit_callbacks, monkeypatch
):
    sent = []
    monkeypatch.setattr(
        "difficulty.services.evaluations.enqueue_evaluation_round",
        lambda evaluation_id, countdown=None: sent.append(evaluation_id),
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            f"/difficulty/{dataset.pk}/evaluate/",
            {
                "estimators": ["length", "oracle-src"],
                "other_estimators": "metric:comet",
                "subset_fraction": "0.5",
                "seed": "7",
                "n_bootstrap": "10",
            },
        )

    evaluation = DifficultyEvaluation.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/difficulty/evaluations/{evaluation.pk}/"
    assert evaluation.estimators == ["length", "oracle-src", "metric:comet"]
    assert (evaluation.subset_fraction, evaluation.seed, evaluation.n_bootstrap) == (0.5, 7, 10)
    assert sent == [evaluation.pk]


def test_evaluate_with_a_bad_estimator_says_why(admin_client, dataset):
    response = admin_client.post(
        f"/difficulty/{dataset.pk}/evaluate/",
        {
            "other_estimators": "metric:nothing",
            "subset_fraction": "0.25",
            "seed": "0",
            "n_bootstrap": "0",
        },
    )

    assert response.status_code == 400
    assert "the dataset has no extra field" in response.content.decode()
    assert not DifficultyEvaluation.objects.exists()


def test_progress_polls_while_running_and_stops_when_done(admin_client, dataset):
    evaluation = services.start_difficulty_evaluation(
        dataset, ["length", "random"], n_bootstrap=20, enqueue=False
    )
    url = f"/difficulty/evaluations/{evaluation.pk}/"

    queued = admin_client.get(url, headers={"HX-Request": "true"})
    services.advance_difficulty_evaluation(evaluation.pk, worker="w", budget_s=0)
    running = admin_client.get(url, headers={"HX-Request": "true"})
    services.run_difficulty_evaluation(evaluation.pk)
    done = admin_client.get(url, headers={"HX-Request": "true"})

    assert queued.status_code == 200
    assert 'hx-trigger="every 1s"' in queued.content.decode()
    assert "<html" not in queued.content.decode()  # the partial only
    assert 'value="0"' in queued.content.decode()
    assert "1 / " in running.content.decode()
    assert done.status_code == 286  # htmx stops polling
    assert "hx-trigger" not in done.content.decode()
    assert "Difficulty estimation correlation" in done.content.decode()


def test_results_page_json_and_chart(admin_client, finished):
    url = f"/difficulty/evaluations/{finished.pk}/"

    html = admin_client.get(url).content.decode()
    download = admin_client.get(url + "?format=json")
    chart = admin_client.get(url + "chart.svg")

    assert "oracle-src" in html and "Random selection" in html and "Full set" in html
    assert download["Content-Disposition"] == (
        f'attachment; filename="dec-evaluation-{finished.pk}.json"'
    )
    assert download.json()["estimators"] == finished.results["estimators"]
    assert chart["Content-Type"] == "image/svg+xml"
    assert b"Difficulty estimation correlation" in chart.content
    assert download.json()["significance"] == finished.results["significance"]


def ranked_table(html: str) -> tuple[list[str], list[str], int]:
    """The DEC table's estimators and ranks in page order, and its rules between clusters."""
    table = html[html.index('<table class="ranked">') : html.index("</table>")]
    names = re.findall(r'<code title="[^"]*">([^<]+)</code>', table)
    ranks = re.findall(r'<tr(?: class="cluster-start")?>\s*<td class="num">([^<]+)</td>', table)
    return names, ranks, table.count('<tr class="cluster-start">')


def test_the_page_ranks_estimators_in_significance_clusters(admin_client, finished):
    url = f"/difficulty/evaluations/{finished.pk}/"
    clusters = finished.results["significance"]

    names, ranks, rules = ranked_table(admin_client.get(url).content.decode())

    # 12 segments × 2 systems separate nothing: one cluster, no rule.
    assert names == clusters["order"] == ["oracle-src", "length", "random"]
    assert ranks == ["1", "1", "1"]
    assert rules == 0

    # The page draws what the results hold: three estimators in two clusters, one rule.
    results = finished.results
    results["significance"]["ranks"] = [1, 2, 2]
    results["significance"]["per_lp"]["en-cs"]["ranks"] = [1, 1, 2]
    for name, rank in zip(clusters["order"], [1, 2, 2], strict=True):
        results["estimators"][name]["rank"] = rank
    DifficultyEvaluation.objects.filter(pk=finished.pk).update(results=results)
    html = admin_client.get(url).content.decode()

    assert ranked_table(html) == (clusters["order"], ["1", "2", "2"], 1)
    assert '<small class="muted" title="rank in en-cs">(2)</small>' in html
    assert "PERM-BOTH permutation test" in html


def test_cancel_from_the_page(admin_client, dataset):
    evaluation = services.start_difficulty_evaluation(dataset, ["length"], enqueue=False)

    response = admin_client.post(f"/difficulty/evaluations/{evaluation.pk}/cancel/")

    evaluation.refresh_from_db()
    assert response.status_code == 302
    assert evaluation.status == DifficultyEvaluation.Status.CANCELLED


def test_missing_objects_are_404(admin_client):
    assert admin_client.get("/difficulty/999/").status_code == 404
    assert admin_client.get("/difficulty/evaluations/999/").status_code == 404


def test_django_admin_lists_datasets_and_evaluations_read_only(admin_client, finished):
    datasets = admin_client.get("/admin/difficulty/difficultydataset/")
    evaluations = admin_client.get("/admin/difficulty/difficultyevaluation/")
    detail = admin_client.get(f"/admin/difficulty/difficultyevaluation/{finished.pk}/change/")

    assert datasets.status_code == evaluations.status_code == detail.status_code == 200
    assert b"tiny" in datasets.content
    assert admin_client.get("/admin/difficulty/difficultydataset/add/").status_code == 403


def test_old_addresses_under_search_redirect_to_the_difficulty_app(admin_client, finished):
    dataset = finished.dataset
    page = admin_client.get(f"/search/difficulty/{dataset.pk}/segments/?page=2")
    evaluation = admin_client.get(f"/search/difficulty/evaluations/{finished.pk}/")
    admin_page = admin_client.get("/admin/search/difficultydataset/")

    assert (page.status_code, page["Location"]) == (
        301,
        f"/difficulty/{dataset.pk}/segments/?page=2",
    )
    assert evaluation["Location"] == f"/difficulty/evaluations/{finished.pk}/"
    assert admin_page["Location"] == "/admin/difficulty/difficultydataset/"
    assert admin_client.get(evaluation["Location"]).status_code == 200
