from django.core.management.base import BaseCommand, CommandError

from imports.models import ImportJob
from imports.services import IMPORT_JOBS, ImportStateError


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
        try:
            job = IMPORT_JOBS.run_in_foreground(job_id)
        except ImportStateError as exc:
            raise CommandError(str(exc)) from exc
        if job.status != ImportJob.Status.DONE:
            raise CommandError(f"import job {job_id} is {job.status}: " + "; ".join(job.errors))
        self.stdout.write(
            self.style.SUCCESS(f"Import job {job_id} is done: {job.kind} {job.result_id}.")
        )
