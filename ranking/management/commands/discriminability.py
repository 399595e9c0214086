"""Measure how well a subset separates MT systems, in the foreground (the twin of the analysis
job): print each subset size against random subsets of its size."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from difficulty.models import DifficultyEvaluation
from ranking.foreground import RankingJobCommand
from ranking.subsets import inputs
from ranking.subsets.forms import parse_percentages
from ranking.subsets.models import DiscriminationAnalysis
from ranking.subsets.services import MAX_RANDOM, run_in_foreground, start_analysis

Kind = DiscriminationAnalysis.SubjectKind


class Command(RankingJobCommand):
    help = (
        "Measure how well a subset separates MT systems (seed 000 App. A) in the foreground: a "
        "challenge-set version, a dataset's hardest segments by an estimator (or the human-score "
        "oracle), or each method of an MT-breaker comparison, against random subsets of the "
        "same size. The analysis is kept and shows in the UI."
    )
    model = DiscriminationAnalysis
    default_test = "permutation"
    refused = "cannot measure"
    option_of = {"n_random": "--random", "subject_kind": "the subject", "input": "the subject"}

    def add_arguments(self, parser: CommandParser) -> None:
        subject = parser.add_mutually_exclusive_group(required=True)
        subject.add_argument("--challenge-set", help="Challenge set name (with --set-version).")
        subject.add_argument("--dataset", help="Difficulty dataset name (hardest segments).")
        subject.add_argument("--evaluation", type=int, help="Finished DEC evaluation id.")
        subject.add_argument("--comparison", help="MT-breaker comparison name.")
        self.add_test_arguments(parser)
        parser.add_argument(
            "--estimator", default=inputs.ORACLE,
            help=f"Hardest by this estimator of the evaluation, or {inputs.ORACLE!r} (default).",
        )  # fmt: skip
        parser.add_argument("--score", default="", choices=["", inputs.QE, inputs.HUMAN],
                            help="A comparison's scores: qe (default) or human.")  # fmt: skip
        parser.add_argument("--random", type=int, default=20,
                            help=f"Random subsets per size (2 to {MAX_RANDOM}).")  # fmt: skip
        parser.add_argument("--sizes", default="",
                            help='Hardest subset sizes in percent, e.g. "5 10 25 50".')  # fmt: skip

    def _subject(self, options: dict) -> dict:
        if options["comparison"] is not None:
            return {"subject_kind": Kind.BREAKER, "comparison": options["comparison"],
                    "score": options["score"]}  # fmt: skip
        if options["challenge_set"] is not None:
            return {"subject_kind": Kind.VERSION, "version": self.frozen_version(options)}
        subject = {"subject_kind": Kind.HARDEST, "estimator": options["estimator"]}
        if options["evaluation"] is not None:
            evaluation = DifficultyEvaluation.objects.filter(pk=options["evaluation"]).first()
            if evaluation is None:
                raise CommandError(f"there is no DEC evaluation #{options['evaluation']}")
            return subject | {"evaluation": evaluation}
        return subject | {"dataset": self.dataset_named(options["dataset"])}

    def handle(self, *args, **options) -> None:
        subject = self._subject(options)
        try:
            fractions = parse_percentages(options["sizes"]) if options["sizes"].strip() else None
        except ValidationError as exc:  # its message names the value at fault
            raise CommandError(f"--sizes: {'; '.join(exc.messages)}") from None
        analysis = self.run_job(
            start_analysis, run_in_foreground, **subject, **self.test_settings(options),
            n_random=options["random"], fractions=fractions,
        )  # fmt: skip
        self.write_result(analysis, options)
