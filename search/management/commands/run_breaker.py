"""``python manage.py run_breaker CONFIG.json [--foreground] [--json]``."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandParser

from core.command_io import add_run_config_arguments, read_run_config, run_to_end, start_job
from search.breaker.selectors import run_summary
from search.breaker.services import (
    RunStateError,
    run_in_foreground,
    start_breaker_comparison,
    start_breaker_run,
)
from search.models import BreakerRun


class Command(BaseCommand):
    help = (
        "Start an MT-breaker run (seed 001) from a JSON config (see search/examples/breaker_*"
        '.json); a config with "methods" starts one run per method on the same seeds. '
        "Workers run them; with --foreground this process runs every round to the end."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_run_config_arguments(parser)

    def handle(self, *args, **options) -> None:
        config = read_run_config(options)
        start = _start_comparison if "methods" in config else _start_run
        foreground = options["foreground"]
        runs = start_job(start, config, foreground=foreground, what="breaker configuration")
        if foreground:
            runs = [run_to_end(run_in_foreground, run, RunStateError) for run in runs]
        summaries = [run_summary(run) for run in runs]
        if options["json"]:
            self.stdout.write(json.dumps(summaries[0] if len(runs) == 1 else summaries))
            return
        for run, summary in zip(runs, summaries, strict=True):
            quality = summary["mean_selected_quality"]
            shown = f"{quality:.1f}" if quality is not None else "–"
            self.stdout.write(
                f"run {run.pk} ({run.get_method_display()}) {run.status}: "
                f"{summary['steps']}/{summary['steps_total']} steps, mean selected quality "
                f"{shown}, cost {summary['cost']:.4f}"
            )
            if not options["foreground"]:
                self.stdout.write(f"queued for the workers; follow it at /search/breaker/{run.pk}/")


def _start_run(config: dict, enqueue: bool) -> list[BreakerRun]:
    return [start_breaker_run(config, enqueue=enqueue)]


def _start_comparison(config: dict, enqueue: bool) -> list[BreakerRun]:
    return start_breaker_comparison(config, enqueue=enqueue)
