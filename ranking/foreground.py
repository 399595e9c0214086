"""What the ranking jobs' foreground twins share (``rank_systems``, ``discriminability``): the
options of the test and the output, the lookups of a source by name, the job started and run
in the foreground, a refusal as one line naming each option, and the result written out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from django.core.management.base import BaseCommand, CommandError, CommandParser

from challenge_sets.models import FrozenVersion
from core.command_io import check_succeeded, problems_error, write_out
from core.commands import named
from difficulty.models import DifficultyDataset
from ranking import downloads, stats
from ranking.models import RankingJob
from ranking.services import MAX_RESAMPLES, RankingError, RankingStateError

__all__ = ["RankingJobCommand"]

# The services name fields as the API does; the commands' options are spelt differently.
OPTION_OF = {
    "language_pair": "--lp", "n_resamples": "--resamples", "version": "--set-version",
}  # fmt: skip


class RankingJobCommand(BaseCommand):
    """A ranking job's foreground twin. A subclass names its ``model``, its test's default,
    what a refusal says (``refused``, e.g. "cannot rank") and its own option names
    (``option_of``); it adds its source's options and calls :meth:`run_job`."""

    model: ClassVar[type[RankingJob]]
    default_test: ClassVar[str]
    refused: ClassVar[str]
    option_of: ClassVar[dict[str, str]] = {}

    def add_test_arguments(self, parser: CommandParser) -> None:
        """The options of every ranking job: the set's version, the pair, the test, the output."""
        what = self.model.untitled.lower()
        # Not --version: Django's commands print their own version with it.
        parser.add_argument("--set-version", type=int, help="Frozen version number of the set.")
        parser.add_argument("--lp", default="", help="Language pair, e.g. zh-en.")
        parser.add_argument("--test", choices=stats.TESTS, default=self.default_test)
        parser.add_argument(
            "--resamples", type=int, default=1000, help=f"Permutation/bootstrap (≤{MAX_RESAMPLES})."
        )
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--name", default="", help=f"Name of the kept {what}.")
        parser.add_argument("--format", default="text", help="Output format.",
                            choices=downloads.formats(self.model, text=True))  # fmt: skip
        parser.add_argument("--output", help="Write the result to this file instead.")

    def test_settings(self, options: dict[str, Any]) -> dict[str, Any]:
        """The start service's arguments that the common options give."""
        return {
            "language_pair": options["lp"], "test": options["test"],
            "n_resamples": options["resamples"], "alpha": options["alpha"],
            "seed": options["seed"], "name": options["name"],
        }  # fmt: skip

    def frozen_version(self, options: dict[str, Any]) -> FrozenVersion:
        if options["set_version"] is None:
            raise CommandError("--challenge-set needs --set-version N")
        name, number = options["challenge_set"], options["set_version"]
        version = FrozenVersion.objects.filter(challenge_set__name=name, number=number).first()
        if version is None:
            raise CommandError(f"challenge set {name!r} has no version {number}")
        return version

    def dataset_named(self, name: str) -> DifficultyDataset:
        return named(DifficultyDataset, name, "difficulty dataset")

    def run_job(
        self, start: Callable[..., RankingJob], run: Callable[[int], RankingJob], **arguments: Any
    ) -> RankingJob:
        """Start the job (not queued) and run its rounds here; a refusal is one CommandError."""
        try:
            job = run(start(**arguments, enqueue=False).pk)
        except RankingError as exc:
            option_of = OPTION_OF | self.option_of
            problems = [f"{option_of.get(f, '--' + f)}: {m}" for f, m in exc.errors.items()]
            raise problems_error(self.refused, problems) from None
        except RankingStateError as exc:
            raise CommandError(str(exc)) from None
        check_succeeded(job, f"{job.untitled.lower()} {job.pk}")
        return job

    def write_result(self, job: RankingJob, options: dict[str, Any]) -> None:
        if write_out(self.stdout, downloads.render(job, options["format"]), options["output"]):
            self.stdout.write(f"wrote {options['output']} ({job.untitled.lower()} {job.pk})")
