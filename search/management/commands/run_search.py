"""``python manage.py run_search CONFIG.json [--foreground] [--json]``."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from core.command_io import add_job_options, read_json_object, run_to_end, start_job
from search.runs.selectors import run_summary
from search.runs.services import RunStateError, run_in_foreground, start_search_run


class Command(BaseCommand):
    help = (
        "Start a bandit search run from a JSON config (see search/examples/). Workers run it; "
        "with --foreground this process runs every round and waits for the end."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("config", type=Path, help="Run configuration (JSON object).")
        add_job_options(parser)
        parser.add_argument("--name", help="Override the run's name.")

    def handle(self, *args, **options) -> None:
        config = read_json_object(options["config"])
        if options["name"]:
            config["name"] = options["name"]
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
