"""Background imports without a worker: a big upload becomes a job (page and API), its
foreground twin imports it exactly as a synchronous import would, a bad last line fails the job
with its number and writes nothing, the sweep finds stalled jobs, and only the uploader or
staff see a job."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

import rounds
from difficulty import services as difficulty_services
from difficulty.dataset_format import ReferenceRule
from difficulty.import_kinds import DATASET_KIND, dataset_options
from difficulty.models import DifficultyDataset
from imports import services
from imports.models import ImportJob
from tests.difficulty.test_difficulty_import import nothing_written
from tests.imports.conftest import THRESHOLD, dataset_lines, snapshot, upload
from tests.rounds.database_outage import end_this_connection, postgres_only, reconnect

pytestmark = pytest.mark.django_db

N_LINES = 120


def start_job(lines, user, name: str = "big") -> ImportJob:
    options = dataset_options(
        name=name, description="", reference_rule=ReferenceRule(), perfect_score=100.0,
        source_file_name="big.jsonl",
    )  # fmt: skip
    return services.start_import(DATASET_KIND, upload(lines), options, created_by=user)


def synchronous(lines, name: str = "sync") -> DifficultyDataset:
    return difficulty_services.import_difficulty_dataset(
        lines, name=name, source_file_name="big.jsonl"
    )


# --- The upload page -----------------------------------------------------------------------


def test_a_big_upload_becomes_a_job_whose_import_equals_a_synchronous_one(
    admin_client, admin_user, sent_tasks, django_capture_on_commit_callbacks
):
    lines = dataset_lines(N_LINES)
    assert len(b"".join(lines)) > THRESHOLD

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/difficulty/upload/",
            {"name": "big", "file": upload(lines), "perfect_score": "100",
             "reference_systems": "refA", "reference_prefixes": ""},
        )  # fmt: skip

    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/imports/{job.pk}/"
    assert sent_tasks == [(services.RUN_TASK, (job.pk,), {"queue": None, "countdown": None})]
    assert (job.kind, job.status, job.lines_total, job.created_by) == (
        DATASET_KIND, "queued", N_LINES, admin_user,
    )  # fmt: skip
    assert not DifficultyDataset.objects.exists()
    page = admin_client.get(f"/imports/{job.pk}/")
    assert b"waiting for a worker" in page.content and b'hx-trigger="every 1s"' in page.content

    call_command("run_import", str(job.pk))

    job.refresh_from_db()
    imported = DifficultyDataset.objects.get(name="big")
    assert (job.status, job.result_id, job.lines_done, job.errors) == (
        "done", imported.pk, N_LINES, [],
    )  # fmt: skip
    assert not job.file and job.claimed_by == ""
    expected = difficulty_services.import_difficulty_dataset(
        lines, name="sync", source_file_name="big.jsonl",
        reference_rule=ReferenceRule(names=("refA",), prefixes=()),
    )  # fmt: skip
    assert snapshot(imported) == snapshot(expected)
    assert imported.created_by == admin_user
    poll = admin_client.get(f"/imports/{job.pk}/", headers={"HX-Request": "true"})
    assert poll.status_code == 286  # htmx stops polling
    assert f'href="/difficulty/{imported.pk}/"'.encode() in poll.content


def test_a_small_upload_is_still_imported_in_the_request(admin_client):
    response = admin_client.post(
        "/difficulty/upload/",
        {"name": "small", "file": upload(dataset_lines(3)), "perfect_score": "100"},
    )
    dataset = DifficultyDataset.objects.get()
    assert response["Location"] == f"/difficulty/{dataset.pk}/"
    assert not ImportJob.objects.exists()


def test_a_bad_last_line_fails_the_job_with_its_number_and_writes_nothing(admin_client, admin_user):
    job = start_job(dataset_lines(N_LINES, bad_last=True), admin_user)

    with pytest.raises(CommandError) as refused:
        call_command("run_import", str(job.pk))

    job.refresh_from_db()
    assert job.status == "failed"
    assert job.errors == [f"line {N_LINES}: missing field 'scores'"]
    assert str(refused.value) == f"import job {job.pk} is failed: {job.errors[0]}"
    assert nothing_written() and not job.file
    page = admin_client.get(f"/imports/{job.pk}/")
    assert b"nothing was written" in page.content
    assert f"line {N_LINES}:".encode() in page.content


def test_a_taken_name_is_refused_at_once_and_no_job_is_made(admin_client):
    synchronous(dataset_lines(3), name="taken")
    response = admin_client.post(
        "/difficulty/upload/",
        {"name": "taken", "file": upload(dataset_lines(N_LINES)), "perfect_score": "100"},
    )
    assert response.status_code == 400
    assert b"named &#x27;taken&#x27; exists already" in response.content
    assert not ImportJob.objects.exists()


# --- The API -------------------------------------------------------------------------------


@pytest.fixture
def api(admin_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


def test_the_api_answers_202_with_the_job_and_the_job_leads_to_the_result(api):
    lines = dataset_lines(N_LINES)
    response = api.post("/api/difficulty-datasets/import/", {"name": "big", "file": upload(lines)})
    job = ImportJob.objects.get()
    assert response.status_code == 202
    url = f"http://testserver/api/import-jobs/{job.pk}/"
    assert response["Location"] == url
    body = response.json()
    assert (body["url"], body["status"], body["kind"], body["lines_total"]) == (
        url, "queued", DATASET_KIND, N_LINES,
    )  # fmt: skip
    assert body["page"] == f"http://testserver/imports/{job.pk}/"

    call_command("run_import", str(job.pk))

    done = api.get(f"/api/import-jobs/{job.pk}/").json()
    dataset = DifficultyDataset.objects.get(name="big")
    assert (done["status"], done["percent"], done["result_id"], done["result_url"]) == (
        "done", 100, dataset.pk, f"/difficulty/{dataset.pk}/",
    )  # fmt: skip
    assert snapshot(dataset) == snapshot(synchronous(lines))


def test_the_api_reports_a_bad_line_through_the_job(api):
    api.post(
        "/api/difficulty-datasets/import/",
        {"name": "bad", "file": upload(dataset_lines(N_LINES, bad_last=True))},
    )
    job = ImportJob.objects.get()
    with pytest.raises(CommandError, match="is failed"):
        call_command("run_import", str(job.pk))
    body = api.get(f"/api/import-jobs/{job.pk}/").json()
    assert body["status"] == "failed" and body["result_url"] is None
    assert body["errors"] == [f"line {N_LINES}: missing field 'scores'"]
    assert nothing_written()


# --- Who sees a job ------------------------------------------------------------------------


def test_only_the_uploader_and_staff_see_a_job(annotator_user, outsider_user, admin_user):
    mine = start_job(dataset_lines(N_LINES), annotator_user)
    theirs = start_job(dataset_lines(N_LINES), outsider_user, name="other")
    uploader, staff = Client(), Client()
    uploader.force_login(annotator_user)
    staff.force_login(admin_user)

    assert uploader.get(f"/imports/{mine.pk}/").status_code == 200
    assert uploader.get(f"/imports/{theirs.pk}/").status_code == 404
    assert staff.get(f"/imports/{theirs.pk}/").status_code == 200
    assert Client().get(f"/imports/{mine.pk}/").status_code == 302  # to the login page

    api = APIClient()
    api.force_authenticate(annotator_user)
    assert [job["id"] for job in api.get("/api/import-jobs/").json()["results"]] == [mine.pk]
    assert api.get(f"/api/import-jobs/{theirs.pk}/").status_code == 404
    assert APIClient().get(f"/api/import-jobs/{mine.pk}/").status_code in (401, 403)


# --- Progress, the sweep, and lost leases -------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_progress_is_visible_while_the_lines_are_read(monkeypatch, admin_user):
    """Outside the writing transaction, progress is committed every PROGRESS_EVERY lines."""
    monkeypatch.setattr(services, "PROGRESS_EVERY", 10)
    seen: list[tuple[int, str]] = []
    job = start_job(dataset_lines(45), admin_user)
    original = services._report

    def spy(job_id, worker, **changes):
        original(job_id, worker, **changes)
        row = ImportJob.objects.get(pk=job_id)
        seen.append((row.lines_done, row.status))

    monkeypatch.setattr(services, "_report", spy)
    assert services.run_import_job(job.pk, worker="w").status is rounds.Status.DONE
    assert seen == [(10, "reading"), (20, "reading"), (30, "reading"), (40, "reading"),
                    (45, "writing")]  # fmt: skip


def test_the_sweep_queues_jobs_whose_message_was_lost_or_whose_worker_died(
    admin_user, sent_tasks, django_capture_on_commit_callbacks
):
    lost = start_job(dataset_lines(N_LINES), admin_user, name="lost")
    dead = start_job(dataset_lines(N_LINES), admin_user, name="dead")
    fresh = start_job(dataset_lines(N_LINES), admin_user, name="fresh")
    long_ago = timezone.now() - timedelta(hours=1)
    ImportJob.objects.filter(pk=lost.pk).update(updated_at=long_ago)
    ImportJob.objects.filter(pk=dead.pk).update(
        status="writing", claimed_by="w1@host:task", lease_expires_at=long_ago
    )

    with django_capture_on_commit_callbacks(execute=True):
        recovered = rounds.sweep()

    assert recovered == {"import": [lost.pk, dead.pk]}
    assert [args for _, args, _ in sent_tasks] == [(lost.pk,), (dead.pk,)]
    assert ImportJob.objects.get(pk=fresh.pk).status == "queued"
    call_command("run_import", str(dead.pk))
    assert ImportJob.objects.get(pk=dead.pk).status == "done"
    assert DifficultyDataset.objects.get().name == "dead"


def test_a_job_another_worker_holds_is_busy_and_a_finished_one_stale(admin_user):
    job = start_job(dataset_lines(N_LINES), admin_user)
    ImportJob.objects.filter(pk=job.pk).update(
        claimed_by="other", lease_expires_at=timezone.now() + timedelta(minutes=5)
    )
    assert services.run_import_job(job.pk, worker="me").status is rounds.Status.BUSY
    ImportJob.objects.filter(pk=job.pk).update(status="done", claimed_by="")
    assert services.run_import_job(job.pk, worker="me").status is rounds.Status.STALE
    assert not DifficultyDataset.objects.exists()


def test_a_file_that_killed_its_worker_three_times_fails_the_job(admin_user):
    job = start_job(dataset_lines(N_LINES), admin_user)
    ImportJob.objects.filter(pk=job.pk).update(attempts=services.MAX_ATTEMPTS)

    assert services.run_import_job(job.pk, worker="me").status is rounds.Status.STOPPED

    job.refresh_from_db()
    assert job.status == "failed"
    assert job.errors == ["gave up: the worker died during each of 3 runs"]
    assert nothing_written()


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_job_whose_database_went_away_is_imported_again_once_it_is_back(monkeypatch, admin_user):
    monkeypatch.setattr(services, "PROGRESS_EVERY", 10)
    job = start_job(dataset_lines(45), admin_user)
    report = services._report

    def cut_after_the_first_report(job_id, worker, **changes):
        report(job_id, worker, **changes)
        end_this_connection()

    monkeypatch.setattr(services, "_report", cut_after_the_first_report)
    for retry in range(services.MAX_ATTEMPTS + 1):  # more outages than a dying worker is allowed
        with pytest.raises(OperationalError):
            services.run_import_job(job.pk, worker=f"celery@a:{100 + retry}:t-1#{retry}")
        reconnect()

    job.refresh_from_db()
    assert (job.status, job.lines_done, job.errors) == ("reading", 10, [])  # not failed
    assert job.attempts == 1  # retries the task asked for are not deaths
    assert nothing_written()
    monkeypatch.setattr(services, "_report", report)
    # The retry, in another process: its earlier run's lease is its own, so no wait.
    outcome = services.run_import_job(job.pk, worker="celery@b:7:t-1#4")
    assert outcome.status is rounds.Status.DONE
    assert DifficultyDataset.objects.get().name == "big"


def test_the_same_message_delivered_again_counts_an_attempt_and_waits_for_the_lease(admin_user):
    job = start_job(dataset_lines(N_LINES), admin_user)
    ImportJob.objects.filter(pk=job.pk).update(
        claimed_by="celery@a:11:t-1#1", attempts=1,
        lease_expires_at=timezone.now() + timedelta(minutes=5),
    )  # fmt: skip

    assert services.run_import_job(job.pk, worker="celery@a:12:t-1#1").status is rounds.Status.BUSY
    ImportJob.objects.filter(pk=job.pk).update(lease_expires_at=timezone.now())
    assert services.run_import_job(job.pk, worker="celery@a:12:t-1#1").status is rounds.Status.DONE
    assert ImportJob.objects.get(pk=job.pk).attempts == 2
