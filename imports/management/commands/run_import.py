from core.commands import RunQueuedJobCommand
from imports.models import ImportJob
from imports.services import IMPORT_JOBS


class Command(RunQueuedJobCommand):
    help = (
        "Run a queued or interrupted background import in the foreground (the twin of the "
        "imports.run_import Celery task)."
    )
    jobs = IMPORT_JOBS
    id_argument = "job_id"
    missing = "import job"

    def failed(self, job: ImportJob) -> str:
        return f"import job {job.pk} is {job.status}: " + "; ".join(job.errors)

    def done(self, job: ImportJob) -> str:
        return f"Import job {job.pk} is done: {job.kind} {job.result_id}."
