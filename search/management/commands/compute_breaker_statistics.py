"""``python manage.py compute_breaker_statistics RUN --embedder E --analyst A [--difficulty D]``."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.command_io import check_succeeded
from search.breaker.data_quality import (
    StatisticsConfigError,
    start_statistics,
    statistics_in_foreground,
)
from search.breaker.services import RunStateError
from search.models import BreakerRun


class Command(BaseCommand):
    help = (
        "Compute the data-quality statistics (seed 001 §3.2, Table 2) of a finished MT-breaker "
        "run's selected texts. Workers compute them; with --foreground this process does "
        "(the foreground twin of the compute_breaker_statistics task)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run", type=int, help="The breaker run's id.")
        parser.add_argument("--embedder", required=True, help="Engine with the embed capability.")
        parser.add_argument("--analyst", required=True, help="Chat engine for the analysis.")
        parser.add_argument("--difficulty", help="Optional source-only difficulty estimator.")
        parser.add_argument("--foreground", action="store_true", help="Compute them here.")
        parser.add_argument("--json", action="store_true", help="Print the values as JSON.")

    def handle(self, *args, **options) -> None:
        run = BreakerRun.objects.filter(pk=options["run"]).first()
        if run is None:
            raise CommandError(f"there is no breaker run {options['run']}")
        try:
            stats = start_statistics(
                run,
                embedder=options["embedder"],
                analyst=options["analyst"],
                difficulty=options["difficulty"],
                enqueue=not options["foreground"],
            )
            if options["foreground"]:
                stats = statistics_in_foreground(stats.pk)
        except StatisticsConfigError as exc:
            raise CommandError(f"refused: {exc}") from None
        except RunStateError as exc:
            raise CommandError(str(exc)) from None
        if not options["foreground"]:
            self.stdout.write(f"queued for the workers; see /search/breaker/{run.pk}/")
            return
        if options["json"]:
            out = {"status": stats.status, "error": stats.error, "values": stats.values,
                   "chrf_signature": stats.chrf_signature, "cost": float(stats.cost)}  # fmt: skip
            self.stdout.write(json.dumps(out, sort_keys=True))
            return
        check_succeeded(stats, "statistics")
        v = stats.values
        self.stdout.write(
            f"run {run.pk}: {v['texts']} texts, diversity embd {v['diversity_embd']:.3f}, "
            f"chrF {v['diversity_chrf']:.3f}, {v['unique_words']:.0f} unique words, "
            f"avg {v['avg_word_count']:.1f} words of {v['avg_word_length']:.2f} characters"
        )
        if "grammaticality" in v:
            self.stdout.write(
                f"analysis of {v['analysed']}: {v['unique_topics']:.0f} topics, "
                f"{v['unique_error_modes']:.0f} error modes, grammaticality "
                f"{v['grammaticality']:.1f}, naturalness {v['naturalness']:.1f}, word rarity "
                f"{v['word_rarity']:.1f}, syntax complexity {v['syntax_complexity']:.1f}"
            )
        if stats.error:
            self.stdout.write(stats.error)
        self.stdout.write(f"chrF signature {stats.chrf_signature}; cost {stats.cost:.4f}")
