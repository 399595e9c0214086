"""``python manage.py run_search CONFIG.json [--foreground] [--json]``."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.command_io import read_json_file
from search.runs.config import RunConfigError
from search.runs.selectors import run_summary
from search.runs.services import RunStateError, run_in_foreground, start_search_run


class Command(BaseCommand):
    help = (
        "Start a bandit search run from a JSON config (see search/examples/). Workers run it; "
        "with --foreground this process runs every round and waits for the end."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("config", type=Path, help="Run configuration (JSON object).")
        parser.add_argument("--foreground", action="store_true", help="Run it here, to the end.")
        parser.add_argument("--json", action="store_true", help="Print the summary as JSON.")
        parser.add_argument("--name", help="Override the run's name.")

    def handle(self, *args, **options) -> None:
        config = self._read(options["config"])
        if options["name"]:
            config["name"] = options["name"]
        try:
            run = start_search_run(config, enqueue=not options["foreground"])
        except RunConfigError as exc:
            raise CommandError(f"invalid run configuration: {exc}") from None
        if options["foreground"]:
            try:
                run = run_in_foreground(run.pk)
            except RunStateError as exc:
                raise CommandError(str(exc)) from None
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

    @staticmethod
    def _read(path: Path) -> dict:
        config = read_json_file(path)
        if not isinstance(config, dict):
            raise CommandError(f"{path} must hold a JSON object")
        return config
