"""Rank MT systems in the foreground (the twin of the ranking job): print the findings table."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Campaign
from challenge_sets.models import FrozenVersion
from core.command_io import output_file, problems_error
from difficulty.models import DifficultyDataset
from ranking import stats, tables
from ranking.models import SystemRanking
from ranking.services import (
    MAX_RESAMPLES,
    RankingError,
    RankingStateError,
    run_in_foreground,
    start_ranking,
)

# The service names fields as the API does; the command's options are spelt differently.
OPTION_OF = {
    "language_pair": "--lp", "n_resamples": "--resamples", "include_references":
    "--include-references", "input_kind": "input", "version": "--set-version",
    "score": "--score" , "dataset": "--dataset", "campaign": "--campaign",
}  # fmt: skip


class Command(BaseCommand):
    help = (
        "Rank MT systems with pairwise significance tests, rank ranges and WMT's clusters, in "
        "the foreground, and print the table (the ranking is kept and shows in the UI)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--dataset", help="Difficulty dataset name.")
        source.add_argument("--campaign", help="Annotation campaign name (ESA or MQM).")
        source.add_argument("--challenge-set", help="Challenge set name (with --set-version).")
        # Not --version: Django's commands print their own version with it.
        parser.add_argument("--set-version", type=int, help="Frozen version number of the set.")
        parser.add_argument(
            "--qe", default="", help="Score the version's translations with this QE engine."
        )
        parser.add_argument("--lp", default="", help="Language pair, e.g. zh-en.")
        parser.add_argument(
            "--score",
            default="",
            help="human (default; a dataset's human score also by its release name, e.g. mqm), "
            "a dataset's extra field, or z (a campaign's per-annotator z-scores).",
        )
        parser.add_argument("--test", choices=stats.TESTS, default="wilcoxon")
        parser.add_argument("--pairs", choices=SystemRanking.Pairs.values, default="all")
        parser.add_argument(
            "--resamples", type=int, default=1000, help=f"Permutation/bootstrap (≤{MAX_RESAMPLES})."
        )
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument("--holm", action="store_true", help="Holm-correct the p-values.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--include-references", action="store_true", help="Rank a dataset's references too."
        )
        parser.add_argument("--name", default="", help="Name of the kept ranking.")
        parser.add_argument(
            "--format", choices=sorted(tables.FORMATS), default="text", help="Output format."
        )
        parser.add_argument("--output", help="Write the table to this file instead.")

    def _source(self, options: dict) -> dict:
        if options["dataset"] is not None:
            dataset = DifficultyDataset.objects.filter(name=options["dataset"]).first()
            if dataset is None:
                raise CommandError(f"there is no difficulty dataset named {options['dataset']!r}")
            return {"input_kind": SystemRanking.InputKind.DATASET, "dataset": dataset}
        if options["campaign"] is not None:
            campaign = Campaign.objects.filter(name=options["campaign"]).first()
            if campaign is None:
                raise CommandError(f"there is no campaign named {options['campaign']!r}")
            return {"input_kind": SystemRanking.InputKind.CAMPAIGN, "campaign": campaign}
        if options["set_version"] is None:
            raise CommandError("--challenge-set needs --set-version N")
        version = FrozenVersion.objects.filter(
            challenge_set__name=options["challenge_set"], number=options["set_version"]
        ).first()
        if version is None:
            name, number = options["challenge_set"], options["set_version"]
            raise CommandError(f"challenge set {name!r} has no version {number}")
        kind = (
            SystemRanking.InputKind.VERSION_QE if options["qe"] else SystemRanking.InputKind.VERSION
        )
        return {"input_kind": kind, "version": version}

    def handle(self, *args, **options) -> None:
        source = self._source(options)
        score = options["qe"] or options["score"]
        try:
            ranking = start_ranking(
                **source, language_pair=options["lp"], score=score, test=options["test"],
                pairs=options["pairs"], n_resamples=options["resamples"], alpha=options["alpha"],
                holm=options["holm"], seed=options["seed"],
                include_references=options["include_references"], name=options["name"],
                enqueue=False,
            )  # fmt: skip
            ranking = run_in_foreground(ranking.pk)
        except RankingError as exc:
            problems = [f"{OPTION_OF.get(f, '--' + f)}: {m}" for f, m in exc.errors.items()]
            raise problems_error("cannot rank", problems) from None
        except RankingStateError as exc:
            raise CommandError(str(exc)) from None
        if ranking.status != SystemRanking.Status.DONE:
            raise CommandError(f"ranking {ranking.pk} {ranking.status}: {ranking.error}")
        table = tables.render(ranking.result, options["format"])
        if options["output"]:
            with output_file(options["output"]) as handle:
                handle.write(table)
            self.stdout.write(f"wrote {options['output']} (ranking {ranking.pk})")
        else:
            self.stdout.write(table, ending="")
