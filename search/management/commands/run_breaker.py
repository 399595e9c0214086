"""``python manage.py run_breaker CONFIG.json [--foreground] [--json]``."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.command_io import read_json_file
from search.breaker.config import BreakerConfigError
from search.breaker.selectors import run_summary
from search.breaker.services import (
    RunStateError,
    run_in_foreground,
    start_breaker_comparison,
    start_breaker_run,
)


class Command(BaseCommand):
    help = (
        "Start an MT-breaker run (seed 001) from a JSON config (see search/examples/breaker_*"
        '.json); a config with "methods" starts one run per method on the same seeds. '
        "Workers run them; with --foreground this process runs every round to the end."
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
        enqueue = not options["foreground"]
        try:
            if "methods" in config:
                runs = start_breaker_comparison(config, enqueue=enqueue)
            else:
                runs = [start_breaker_run(config, enqueue=enqueue)]
        except BreakerConfigError as exc:
            raise CommandError(f"invalid breaker configuration: {exc}") from None
        if options["foreground"]:
            try:
                runs = [run_in_foreground(run.pk) for run in runs]
            except RunStateError as exc:
                raise CommandError(str(exc)) from None
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

    @staticmethod
    def _read(path: Path) -> dict:
        config = read_json_file(path)
        if not isinstance(config, dict):
            raise CommandError(f"{path} must hold a JSON object")
        return config
