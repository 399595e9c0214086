"""The difficulty dataset upload page, API and command take the same formats (WMT-style JSONL,
Google MQM TSV), recognise them, and refuse a file of another format than the one chosen in one
message."""

from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from rest_framework.test import APIClient

from difficulty.models import DifficultyDataset
from imports.models import ImportJob
from tests.difficulty.test_difficulty_import import nothing_written
from tests.difficulty.test_difficulty_pages import jsonl

pytestmark = pytest.mark.django_db

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment\n"
# 3 segments × 2 systems; line 5 has a <v> never closed (the releases' quirk).
ROWS = [
    "sysA\ttalk.1\t1\t1\tr1\tA cat sat.\tEine <v>Katze</v> saß.\tAccuracy/Mistranslation\tMajor\t",
    "sysB\ttalk.1\t1\t1\tr1\tA cat sat.\tEine Katze saß.\tNo-error\tNo-error\t",
    "sysA\ttalk.1\t2\t2\tr1\tIt rained.\tEs regnete.\tNo-error\tNo-error\t",
    "sysB\ttalk.1\t2\t2\tr1\tIt rained.\tEs <v>regnete.\tFluency/Grammar\tMinor\t",
    "sysA\ttalk.2\t1\t3\tr2\tGood night.\tGute Nacht.\tNo-error\tNo-error\t",
    "sysB\ttalk.2\t1\t3\tr2\tGood night.\tGute <v>Nacht</v>.\tFluency/Spelling\tMinor\t",
]
TSV = (HEADER + "".join(row + "\n" for row in ROWS)).encode()
WRONG_CHOICE = (
    "line 1 is not valid JSON: this looks like a Google MQM TSV; choose the format Google MQM "
    "TSV (google-mqm)"
)
NOTES = [
    "languages en-de read from the file name mqm_ted_ende.tsv",
    "1 row with unbalanced <v>…</v> marks (line 5) imported with the error unlocated: "
    "category and severity kept, no span",
]


@pytest.fixture
def api(admin_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


def upload(content: bytes, name: str = "mqm_ted_ende.tsv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="text/plain")


def escaped(text: str) -> str:
    return text.replace("<", "&lt;").replace(">", "&gt;")


def test_the_page_recognises_a_google_mqm_tsv_and_reports_what_it_let_through(admin_client):
    response = admin_client.post(
        "/difficulty/upload/", {"name": "ted", "file": upload(TSV), "perfect_score": "100"}
    )

    dataset = DifficultyDataset.objects.get(name="ted")
    assert response.status_code == 302 and response["Location"] == f"/difficulty/{dataset.pk}/"
    assert (dataset.n_segments, dataset.n_systems) == (3, 2)
    assert dataset.language_pairs.get().code == "en-de"
    assert dataset.import_report == {
        "language_pair_from_file_name": "en-de",
        "unbalanced_mark_rows": 1,
        "unbalanced_mark_lines": [5],
    }
    page = admin_client.get(response["Location"]).content.decode()
    assert f"Imported ted: 3 segments. Note: {escaped(NOTES[0])}. Note: {escaped(NOTES[1])}." in (
        page
    )
    assert all(f"<li>{escaped(note)}</li>" in page for note in NOTES)


def test_the_page_refuses_a_tsv_uploaded_as_jsonl_in_one_message(admin_client):
    response = admin_client.post(
        "/difficulty/upload/",
        {"name": "ted", "file": upload(TSV), "file_format": "wmt-jsonl", "perfect_score": "100"},
    )

    assert response.status_code == 400
    html = response.content.decode()
    alert = html[html.index('role="alert"') : html.index("</article>")]
    # One message, not one per row.
    assert alert.count("<li>") == 1 and f"<li>{escaped(WRONG_CHOICE)}</li>" in alert
    assert nothing_written()


def test_the_page_offers_the_commands_formats_and_a_language_pair(admin_client):
    html = admin_client.get("/difficulty/upload/").content.decode()
    for value in ("auto", "wmt-jsonl", "google-mqm"):
        assert f'<option value="{value}"' in html
    assert 'name="langs"' in html


def test_the_api_imports_a_tsv_with_its_language_pair_and_reports_the_unbalanced_row(api):
    response = api.post(
        "/api/difficulty-datasets/import/",
        {"name": "ted", "file": upload(TSV, "ted.tsv"), "format": "google-mqm", "langs": "zh-en"},
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["import_report"] == {"unbalanced_mark_rows": 1, "unbalanced_mark_lines": [5]}
    assert [pair["code"] for pair in body["language_pairs"]] == ["zh-en"]


@pytest.mark.parametrize(
    ("content", "name", "file_format", "detail"),
    [
        (TSV, "mqm_ted_ende.tsv", "wmt-jsonl", WRONG_CHOICE),
        (
            jsonl(3),
            "scores_en-cs.tsv",
            "google-mqm",
            "line 1 is not a Google MQM TSV header: this looks like WMT-style JSONL; choose the "
            "format WMT-style JSONL (wmt-jsonl)",
        ),
        (
            b"a,b,c\n1,2,3\n" * 50,
            "scores.csv",
            "auto",
            "line 1 is neither a JSON object (WMT-style JSONL), the header of a Google MQM TSV "
            "(system doc doc_id seg_id rater source target category severity) nor that of a WMT "
            "DA file (SYS SID RAW.SCR Z.SCR N, or HITId WorkerId ... type sid score), and the "
            "file is no archive: this file is in none of the formats",
        ),
        (
            b"id\tsrc\tscore\n" + b"1\tx\t3\n" * 50,
            "scores.txt",
            "wmt-jsonl",
            "line 1 is not valid JSON: this looks like a TSV, but not a Google MQM TSV (whose "
            "header starts with system doc doc_id seg_id rater source target category severity)",
        ),
    ],
)
def test_the_api_refuses_a_file_of_another_format_in_one_message(
    api, content, name, file_format, detail
):
    response = api.post(
        "/api/difficulty-datasets/import/",
        {"name": "x", "file": upload(content, name), "format": file_format},
    )

    assert response.status_code == 400
    assert response.json() == {"detail": detail}
    assert nothing_written()


def test_the_api_names_a_bad_language_pair_and_a_tsv_without_one(api):
    bad = api.post(
        "/api/difficulty-datasets/import/",
        {"name": "x", "file": upload(TSV), "langs": "german"},
    )
    unnamed = api.post("/api/difficulty-datasets/import/", {"name": "x", "file": upload(TSV, "x")})

    assert bad.status_code == 400 and list(bad.json()) == ["detail", "langs"]
    assert unnamed.status_code == 400
    assert unnamed.json()["detail"].endswith("give the language pair, e.g. en-de")
    assert nothing_written()


def test_the_command_recognises_the_format_by_default(tmp_path):
    path = tmp_path / "mqm_ted_ende.tsv"
    path.write_bytes(TSV)
    out = io.StringIO()

    call_command("import_difficulty_dataset", str(path), "--name", "ted", stdout=out)

    dataset = DifficultyDataset.objects.get(name="ted")
    assert out.getvalue().splitlines()[1:] == [f"Note: {note}." for note in NOTES]
    assert dataset.n_segments == 3


def test_a_big_tsv_from_the_page_is_imported_by_a_job(
    admin_client, settings, tmp_path, sent_tasks, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.IMPORT_INLINE_MAX_BYTES = len(TSV) - 1

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/difficulty/upload/", {"name": "ted", "file": upload(TSV), "perfect_score": "100"}
        )
    job = ImportJob.objects.get()
    assert response["Location"] == f"/imports/{job.pk}/"
    call_command("run_import", str(job.pk))

    job.refresh_from_db()
    dataset = DifficultyDataset.objects.get(name="ted")
    assert (job.status, job.result_id) == ("done", dataset.pk)
    assert job.summary == f"3 segments, 1 language pair(s), 2 systems; {'; '.join(NOTES)}"
