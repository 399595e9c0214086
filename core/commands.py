"""What several management commands share beyond files (core.command_io): the lookup of a row
by the name the user typed, and base commands for the shapes several commands have
(STYLE.md 13)."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Model

from rounds import LeasedJobKind

__all__ = ["RunQueuedJobCommand", "named"]

Row = TypeVar("Row", bound=Model)


def named(model: type[Row], name: str, what: str) -> Row:
    """The ``model`` row named ``name``; none is one line: ``there is no {what} named 'name'``."""
    found = model._default_manager.filter(name=name).first()
    if found is None:
        raise CommandError(f"there is no {what} named {name!r}")
    return found


class RunQueuedJobCommand(BaseCommand):
    """Run a queued or interrupted job to the end in the foreground: the twin of the Celery
    task that advances it. The job's id is the one argument (``id_argument``); an unknown id,
    a refusal (the kind's ``state_error``, e.g. a worker holds the job) and a job that did not
    end done are each one ``CommandError``.

    A subclass names the kind of job (``jobs``), what an unknown id is not (``missing``, e.g.
    "import job") and implements :meth:`failed` and :meth:`done` (the lines for a job that
    failed or finished); it overrides :meth:`run` where its service runs the job otherwise."""

    jobs: ClassVar[LeasedJobKind]
    id_argument: ClassVar[str]
    missing: ClassVar[str]

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(self.id_argument, type=int)

    def handle(self, *args: Any, **options: Any) -> None:
        pk = options[self.id_argument]
        if not self.jobs.model._default_manager.filter(pk=pk).exists():
            raise CommandError(f"there is no {self.missing} {pk}")
        try:
            job = self.run(pk)
        except self.jobs.state_error as exc:
            raise CommandError(str(exc)) from exc
        if job.status not in job.SUCCEEDED:
            raise CommandError(self.failed(job))
        self.stdout.write(self.style.SUCCESS(self.done(job)))

    def run(self, pk: int) -> Any:
        """Every remaining round of job ``pk``, here; the job as it ended."""
        return self.jobs.run_in_foreground(pk)

    def failed(self, job: Any) -> str:
        raise NotImplementedError

    def done(self, job: Any) -> str:
        raise NotImplementedError
