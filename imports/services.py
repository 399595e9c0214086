"""Write use-cases of background imports (ADR 0022).

* :func:`start_import`: store an upload and queue its job.
* :func:`run_import_job`: one worker's run of a job: read the stored file (progress visible),
  then the kind's service writes the result and marks the job done in one transaction.
* :func:`recover_import_jobs`: the sweep's part: queue jobs whose worker died or whose message
  was lost (the re-run starts from the file; the dead run's transaction left nothing).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import PurePath
from typing import IO, Any

from django.conf import settings
from django.core.files import File
from django.db import connection, transaction
from django.db.models import Case, Expression, F, When
from django.utils import timezone

import rounds
from imports import kinds
from imports.models import ImportJob

RUN_TASK = "imports.run_import"
# Progress is written every so many lines: often enough for a page polling each second, rarely
# enough to cost nothing next to parsing.
PROGRESS_EVERY = 2000
# Refusals kept on a job (a file of bad lines would otherwise fill the row).
MAX_ERRORS = 100
# A job whose worker died this often is a file that kills workers (memory, say): stop trying.
MAX_ATTEMPTS = 3


class ImportStateError(RuntimeError):
    """The job cannot be run here now (a worker holds it)."""


class GaveUp(RuntimeError):
    """The job's file killed its worker too often: it is not tried again."""


def runs_in_background(upload: File) -> bool:
    """Whether an upload is big enough to be imported by a worker rather than in the request."""
    return bool(upload.size and upload.size > settings.IMPORT_INLINE_MAX_BYTES)


def start_import(
    kind_name: str, upload: File, options: Mapping[str, Any], *, created_by=None
) -> ImportJob:
    """Store ``upload`` and queue its import; ``options`` are JSON the kind's ``run`` reads.

    Raises :class:`~imports.kinds.ImportRefused` when the kind refuses the options at once.
    """
    kind = kinds.get(kind_name)
    if kind.check is not None:
        kind.check(options)
    name = PurePath(upload.name or "upload").name
    with transaction.atomic():
        job = ImportJob(
            kind=kind.name,
            file_name=name[:255],
            file_size=upload.size or 0,
            options=dict(options),
            lines_total=_count_lines(upload),
            created_by=created_by,
        )
        # A name of our own: the uploader's file name is kept in file_name only.
        job.file.save(f"{uuid.uuid4().hex}{PurePath(name).suffix[:10]}", upload, save=False)
        job.save()
        enqueue_import(job.pk)
    return job


def enqueue_import(job_id: int, *, countdown: float | None = None) -> None:
    rounds.enqueue(RUN_TASK, (job_id,), countdown=countdown)


def _count_lines(upload: File) -> int:
    lines, last = 0, b"\n"
    for chunk in upload.chunks():
        lines += chunk.count(b"\n")
        last = chunk[-1:] or last
    return lines + (last != b"\n")


def _import(job_id: int, worker: str) -> rounds.Outcome:
    """Read the stored file and have the kind write the result, which marks the job done in
    the same transaction (:func:`_finish`); the upload is dropped then."""
    job = ImportJob.objects.select_related("created_by").get(pk=job_id)
    if job.attempts > MAX_ATTEMPTS:
        raise GaveUp(f"gave up: the worker died during each of {MAX_ATTEMPTS} runs")
    with job.file.open("rb") as stream:
        _run_kind(job, worker, stream)
    _drop_file(job)
    return rounds.Outcome(rounds.Status.DONE)


def _attempts_after_claim(worker: str) -> Expression:
    """One more attempt, unless ``worker`` retries a run that its task ended itself (after a
    lost database): only a run that died counts towards giving up."""
    earlier = rounds.held_by_an_earlier_run(worker)
    if earlier is None:
        return F("attempts") + 1
    return Case(When(earlier, then=F("attempts")), default=F("attempts") + 1)


def _run_kind(job: ImportJob, worker: str, stream: IO[bytes]) -> None:
    kind = kinds.get(job.kind)
    finished = []

    def on_written(result: Any, summary: str = "") -> None:
        _finish(job, worker, result.pk, summary)
        finished.append(result.pk)

    kind.run(_counted(stream, job.pk, worker), job.options, job.created_by, on_written)
    if not finished:
        raise RuntimeError(f"import kind {job.kind!r} never called on_written")


def _counted(stream: Iterable[bytes], job_id: int, worker: str) -> Iterator[bytes]:
    """The file's lines, writing progress as the kind's service reads them."""
    done = 0
    for line in stream:
        done += 1
        if done % PROGRESS_EVERY == 0:
            _report(job_id, worker, lines_done=done)
        yield line
    _report(job_id, worker, lines_done=done, status=ImportJob.Status.WRITING)


def _report(job_id: int, worker: str, **changes: Any) -> None:
    """Best-effort progress: skipped inside a transaction (nobody could see it before the
    commit) and when the row is locked (progress never waits)."""
    if connection.in_atomic_block:
        return
    with transaction.atomic():
        mine = ImportJob.objects.filter(pk=job_id, claimed_by=worker)
        if list(mine.select_for_update(skip_locked=True).values_list("pk", flat=True)):
            mine.update(updated_at=timezone.now(), **changes)


def _finish(job: ImportJob, worker: str, result_id: int, summary: str) -> None:
    """Mark the job done inside the kind's writing transaction (so both commit or neither)."""
    marked = rounds.release(
        ImportJob.objects.filter(pk=job.pk), worker,
        status=ImportJob.Status.DONE, result_id=result_id, summary=summary[:500],
        lines_done=F("lines_total"), errors=[], finished_at=timezone.now(),
    )  # fmt: skip
    if not marked:
        raise rounds.LeaseLost(f"import job {job.pk} is no longer held by {worker}")


def _errors_of(exc: BaseException) -> list[str]:
    """Why a permanent error failed the job, line by line."""
    return exc.errors if isinstance(exc, kinds.ImportRefused) else [str(exc)]


def _failure(errors: list[str]) -> dict[str, Any]:
    """The row's changes for a failed import: its errors (the first ``MAX_ERRORS``)."""
    if len(errors) > MAX_ERRORS:
        errors = [*errors[:MAX_ERRORS], f"(and {len(errors) - MAX_ERRORS} more)"]
    return {"errors": errors}


def _drop_file(job: ImportJob) -> None:
    """A finished job's upload is of no more use (the result or the errors are saved)."""
    if job.file:
        job.file.delete(save=False)
        ImportJob.objects.filter(pk=job.pk).update(file="")


# The lifecycle every round-based job shares (rounds.jobs), for imports: one round per job (the
# re-run starts from the file; a dead run's transaction left nothing), and a run cut short by
# the time limit fails the job (it would be cut short again).
IMPORT_JOBS = rounds.LeasedJobKind(
    label="import job",
    sweep_name="import",
    model=ImportJob,
    work=_import,
    enqueue_round=enqueue_import,
    state_error=ImportStateError,
    numbered=False,
    running=ImportJob.Status.READING,
    claim_changes=lambda worker: {"lines_done": 0, "attempts": _attempts_after_claim(worker)},
    permanent=(kinds.ImportRefused, GaveUp),
    reason=_errors_of,
    interrupted=["took longer than a worker may run; use the command"],
    failure=_failure,
    internal_reason=lambda exc: [f"the import failed unexpectedly ({type(exc).__name__})"],
    on_failed=lambda job_id: _drop_file(ImportJob.objects.get(pk=job_id)),
)
# Import a job's file: DONE, STOPPED (failed: the row says why), STALE or BUSY.
run_import_job = IMPORT_JOBS.advance
recover_import_jobs = IMPORT_JOBS.recover
