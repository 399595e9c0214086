from django.core.management.base import BaseCommand, CommandError

import rounds
from imports.models import ImportJob
from imports.services import run_import_job


class Command(BaseCommand):
    help = (
        "Run a queued or interrupted background import in the foreground (the twin of the "
        "imports.run_import Celery task)."
    )

    def add_arguments(self, parser):
        parser.add_argument("job_id", type=int)

    def handle(self, *args, job_id: int, **options):
        if not ImportJob.objects.filter(pk=job_id).exists():
            raise CommandError(f"there is no import job {job_id}")
        worker = rounds.foreground_worker()
        try:
            rounds.run_in_foreground(lambda: run_import_job(job_id, worker=worker))
        except rounds.Busy as exc:
            raise CommandError(f"import job {job_id} is {exc}") from exc
        job = ImportJob.objects.get(pk=job_id)
        if job.status != ImportJob.Status.DONE:
            raise CommandError(f"import job {job_id} is {job.status}: " + "; ".join(job.errors))
        self.stdout.write(
            self.style.SUCCESS(f"Import job {job_id} is done: {job.kind} {job.result_id}.")
        )
