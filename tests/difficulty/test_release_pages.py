"""The releases through their adapters: the upload page (format and score choices, a big
archive imported by a job), the command on a release's folder, the API, and the pages of a
dataset whose release holds no texts."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from rest_framework.test import APIClient

from difficulty.models import DifficultyDataset
from imports.models import ImportJob
from tests.difficulty.test_release_imports import DA, MTME

pytestmark = pytest.mark.django_db


def da_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in DA.items():
            archive.writestr(f"newstest2022-toen/{name}", content)
    return buffer.getvalue()


def test_the_page_imports_a_da_archive_with_the_chosen_format_and_score_by_a_job(
    admin_client, settings, tmp_path, sent_tasks, django_capture_on_commit_callbacks
):
    data = da_zip()
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.IMPORT_INLINE_MAX_BYTES = len(data) - 1
    form = admin_client.get("/difficulty/upload/").content.decode()
    offered = ('value="mt-metrics-eval"', 'value="wmt-da"', 'name="human_score"', 'name="test_set"')
    assert all(field in form for field in (*offered, 'name="score_kind"', 'value="wmt-appraise"'))

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/difficulty/upload/",
            {
                "name": "de-en",
                "file": SimpleUploadedFile("release.zip", data),
                "file_format": "wmt-da",
                "score_kind": "raw",
                "perfect_score": "100",
            },
        )
    job = ImportJob.objects.get()
    assert response["Location"] == f"/imports/{job.pk}/"
    call_command("run_import", str(job.pk))

    job.refresh_from_db()
    dataset = DifficultyDataset.objects.get(name="de-en")
    assert (job.status, job.result_id) == ("done", dataset.pk)
    assert dataset.import_report["score_kind"] == "raw"
    assert dataset.language_pairs.get().score_matrix()[0].tolist() == [80.0, 60.0]
    assert job.summary.startswith(
        "2 segments, 1 language pair(s), 2 systems; WMT crowd DA: scores are the per-segment "
        "means of the raw scores; no texts; 1 quality-control row (BAD_REF 1) counted as checks"
    )


def test_the_pages_of_a_dataset_without_texts_render_and_offer_no_text_estimator(
    admin_client, tmp_path
):
    folder = tmp_path / "newstest2022-toen"
    folder.mkdir()
    for name, content in DA.items():
        (folder / name).write_text(content, encoding="utf-8")
    out = io.StringIO()

    call_command("import_difficulty_dataset", str(folder), "--name", "de-en", stdout=out)

    dataset = DifficultyDataset.objects.get()
    assert out.getvalue().splitlines() == [
        f"Imported 'de-en' (id {dataset.pk}): 2 segments, 1 language pair(s), 2 systems; "
        "references left out of evaluation: none; 4 individual judgments kept.",
        "Note: WMT crowd DA: scores are the per-segment means of the z-scores; no texts.",
        "Note: 1 quality-control row (BAD_REF 1) counted as checks, not scored.",
        "Note: 1 REPEAT judgment kept as judgments marked as repeats.",
    ]
    detail = admin_client.get(f"/difficulty/{dataset.pk}/")
    segments = admin_client.get(f"/difficulty/{dataset.pk}/segments/")
    assert detail.status_code == segments.status_code == 200
    page = detail.content.decode()
    assert '<td class="num">4</td>' in page  # the pair's judgments
    length = page[page.index('value="length"') :]
    assert "disabled" in length[: length.index("</label>")]
    assert "reads the source text" in length[: length.index("</label>")]
    assert "no source text (segment 1)" in segments.content.decode()


def test_the_api_recognises_a_release_archive_and_names_the_human_scores_on_offer(admin_user):
    api = APIClient()
    api.force_authenticate(admin_user)
    mtme = io.BytesIO()
    with zipfile.ZipFile(mtme, "w") as archive:
        for name, content in MTME.items():
            archive.writestr(name, content)
        archive.writestr("wmt23/human-scores/en-de.wmt.seg.score", "sysA\t70\n" * 3)

    created = api.post(
        "/api/difficulty-datasets/import/",
        {"name": "d", "file": SimpleUploadedFile("r.zip", da_zip()), "da_score": "raw"},
    )
    refused = api.post(
        "/api/difficulty-datasets/import/",
        {"name": "m", "file": SimpleUploadedFile("v2.zip", mtme.getvalue())},
    )

    assert created.status_code == 201
    assert created.json()["language_pairs"][0]["n_judgments"] == 4
    assert created.json()["import_report"]["score_kind"] == "raw"
    assert refused.status_code == 400
    assert refused.json()["errors"] == [
        "choose the human score to import; wmt23 has mqm (en-de), wmt (en-de)"
    ]
