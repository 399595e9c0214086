"""Rank MT systems in the foreground (the twin of the ranking job): print the findings table."""

from __future__ import annotations

from django.core.management.base import CommandParser

from annotation.models import Campaign
from core.commands import named
from ranking.foreground import RankingJobCommand
from ranking.models import SystemRanking
from ranking.services import run_in_foreground, start_ranking

InputKind = SystemRanking.InputKind


class Command(RankingJobCommand):
    help = (
        "Rank MT systems with pairwise significance tests, rank ranges and WMT's clusters, in "
        "the foreground, and print the table (the ranking is kept and shows in the UI)."
    )
    model = SystemRanking
    default_test = "wilcoxon"
    refused = "cannot rank"
    option_of = {"include_references": "--include-references", "input_kind": "input"}

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--dataset", help="Difficulty dataset name.")
        source.add_argument("--campaign", help="Annotation campaign name (ESA or MQM).")
        source.add_argument("--challenge-set", help="Challenge set name (with --set-version).")
        self.add_test_arguments(parser)
        parser.add_argument(
            "--qe", default="", help="Score the version's translations with this QE engine."
        )
        parser.add_argument(
            "--score",
            default="",
            help="human (default; a dataset's human score also by its release name, e.g. mqm), "
            "a dataset's extra field, or z (a campaign's per-annotator z-scores).",
        )
        parser.add_argument("--pairs", choices=SystemRanking.Pairs.values, default="all")
        parser.add_argument("--holm", action="store_true", help="Holm-correct the p-values.")
        parser.add_argument(
            "--include-references", action="store_true", help="Rank a dataset's references too."
        )

    def _source(self, options: dict) -> dict:
        if options["dataset"] is not None:
            return {"input_kind": InputKind.DATASET,
                    "dataset": self.dataset_named(options["dataset"])}  # fmt: skip
        if options["campaign"] is not None:
            campaign = named(Campaign, options["campaign"], "campaign")
            return {"input_kind": InputKind.CAMPAIGN, "campaign": campaign}
        kind = InputKind.VERSION_QE if options["qe"] else InputKind.VERSION
        return {"input_kind": kind, "version": self.frozen_version(options)}

    def handle(self, *args, **options) -> None:
        ranking = self.run_job(
            start_ranking, run_in_foreground, **self._source(options),
            **self.test_settings(options), score=options["qe"] or options["score"],
            pairs=options["pairs"], holm=options["holm"],
            include_references=options["include_references"],
        )  # fmt: skip
        self.write_result(ranking, options)
