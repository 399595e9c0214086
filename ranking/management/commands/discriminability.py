"""Measure how well a subset separates MT systems, in the foreground (the twin of the analysis
job): print each subset size against random subsets of its size."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from challenge_sets.models import FrozenVersion
from core.command_io import output_file, problems_error
from difficulty.models import DifficultyDataset, DifficultyEvaluation
from ranking import stats
from ranking.subsets import exports, inputs
from ranking.subsets.forms import parse_percentages
from ranking.subsets.models import DiscriminationAnalysis
from ranking.subsets.services import (
    MAX_RANDOM,
    AnalysisError,
    AnalysisStateError,
    run_in_foreground,
    start_analysis,
)

Kind = DiscriminationAnalysis.SubjectKind
# The service names fields as the API does; the command's options are spelt differently.
OPTION_OF = {
    "language_pair": "--lp", "n_resamples": "--resamples", "n_random": "--random",
    "version": "--set-version", "subject_kind": "the subject", "input": "the subject",
}  # fmt: skip
FORMATS = ("text", "csv", "json")


class Command(BaseCommand):
    help = (
        "Measure how well a subset separates MT systems (seed 000 App. A) in the foreground: a "
        "challenge-set version, a dataset's hardest segments by an estimator (or the human-score "
        "oracle), or each method of an MT-breaker comparison, against random subsets of the "
        "same size. The analysis is kept and shows in the UI."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        subject = parser.add_mutually_exclusive_group(required=True)
        subject.add_argument("--challenge-set", help="Challenge set name (with --set-version).")
        subject.add_argument("--dataset", help="Difficulty dataset name (hardest segments).")
        subject.add_argument("--evaluation", type=int, help="Finished DEC evaluation id.")
        subject.add_argument("--comparison", help="MT-breaker comparison name.")
        parser.add_argument("--set-version", type=int, help="Frozen version number of the set.")
        parser.add_argument(
            "--estimator", default=inputs.ORACLE,
            help=f"Hardest by this estimator of the evaluation, or {inputs.ORACLE!r} (default).",
        )  # fmt: skip
        parser.add_argument("--score", default="", choices=["", inputs.QE, inputs.HUMAN],
                            help="A comparison's scores: qe (default) or human.")  # fmt: skip
        parser.add_argument("--lp", default="", help="Language pair (a comparison: language).")
        parser.add_argument("--test", choices=stats.TESTS, default="permutation")
        parser.add_argument("--resamples", type=int, default=1000)
        parser.add_argument("--random", type=int, default=20,
                            help=f"Random subsets per size (2 to {MAX_RANDOM}).")  # fmt: skip
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--sizes", default="",
                            help='Hardest subset sizes in percent, e.g. "5 10 25 50".')  # fmt: skip
        parser.add_argument("--name", default="", help="Name of the kept analysis.")
        parser.add_argument("--format", choices=FORMATS, default="text")
        parser.add_argument("--output", help="Write the result to this file instead.")

    def _subject(self, options: dict) -> dict:
        if options["comparison"] is not None:
            return {"subject_kind": Kind.BREAKER, "comparison": options["comparison"],
                    "score": options["score"]}  # fmt: skip
        if options["challenge_set"] is not None:
            if options["set_version"] is None:
                raise CommandError("--challenge-set needs --set-version N")
            version = FrozenVersion.objects.filter(
                challenge_set__name=options["challenge_set"], number=options["set_version"]
            ).first()
            if version is None:
                raise CommandError(f"challenge set {options['challenge_set']!r} has no version "
                                   f"{options['set_version']}")  # fmt: skip
            return {"subject_kind": Kind.VERSION, "version": version}
        subject = {"subject_kind": Kind.HARDEST, "estimator": options["estimator"]}
        if options["evaluation"] is not None:
            evaluation = DifficultyEvaluation.objects.filter(pk=options["evaluation"]).first()
            if evaluation is None:
                raise CommandError(f"there is no DEC evaluation #{options['evaluation']}")
            return subject | {"evaluation": evaluation}
        dataset = DifficultyDataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"there is no difficulty dataset named {options['dataset']!r}")
        return subject | {"dataset": dataset}

    def handle(self, *args, **options) -> None:
        subject = self._subject(options)
        try:
            fractions = parse_percentages(options["sizes"]) if options["sizes"].strip() else None
        except ValidationError as exc:  # its message names the value at fault
            raise CommandError(f"--sizes: {'; '.join(exc.messages)}") from None
        try:
            analysis = start_analysis(
                **subject, language_pair=options["lp"], test=options["test"],
                n_resamples=options["resamples"], n_random=options["random"],
                alpha=options["alpha"], seed=options["seed"], fractions=fractions,
                name=options["name"], enqueue=False,
            )  # fmt: skip
            analysis = run_in_foreground(analysis.pk)
        except AnalysisError as exc:
            problems = [f"{OPTION_OF.get(f, '--' + f)}: {m}" for f, m in exc.errors.items()]
            raise problems_error("cannot measure", problems) from None
        except AnalysisStateError as exc:
            raise CommandError(str(exc)) from None
        if analysis.status != DiscriminationAnalysis.Status.DONE:
            raise CommandError(f"analysis {analysis.pk} {analysis.status}: {analysis.error}")
        self._write(analysis, options)

    def _write(self, analysis: DiscriminationAnalysis, options: dict) -> None:
        render = {"text": exports.text_table, "csv": exports.csv_download,
                  "json": exports.json_download}[options["format"]]  # fmt: skip
        content = render(analysis.result)
        if options["output"]:
            with output_file(options["output"]) as handle:
                handle.write(content)
            self.stdout.write(f"wrote {options['output']} (analysis {analysis.pk})")
        else:
            self.stdout.write(content, ending="")
