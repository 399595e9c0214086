"""``python manage.py run_search CONFIG.json [--foreground] [--json]``."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandParser

from core.command_io import add_run_config_arguments, read_run_config, run_to_end, start_job
from search.runs.selectors import run_summary
from search.runs.services import RunStateError, run_in_foreground, start_search_run


class Command(BaseCommand):
    help = (
        "Start a bandit search run from a JSON config (see search/examples/). Workers run it; "
        "with --foreground this process runs every round and waits for the end."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_run_config_arguments(parser)

    def handle(self, *args, **options) -> None:
        config = read_run_config(options)
        foreground = options["foreground"]
        run = start_job(start_search_run, config, foreground=foreground, what="run configuration")
        if foreground:
            run = run_to_end(run_in_foreground, run, RunStateError)
        summary = run_summary(run)
        if options["json"]:
            self.stdout.write(json.dumps(summary))
            return
        self.stdout.write(
            f"run {run.pk} {run.status}: {summary['pulls']}/{summary['budget']} pulls, "
            f"top-{run.k} mean {summary['top_k_mean']}, cost {summary['cost']}"
        )
        if not options["foreground"]:
            self.stdout.write(f"queued for the workers; follow it at /search/runs/{run.pk}/")
