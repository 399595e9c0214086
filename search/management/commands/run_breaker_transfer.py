"""``python manage.py run_breaker_transfer CONFIG.json [--foreground] [--json]``."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from core.command_io import (
    add_job_options,
    outcome_line,
    queued_note,
    read_json_object,
    run_to_end,
    start_job,
)
from search.breaker.services import RunStateError
from search.breaker.transfer.selectors import matrix
from search.breaker.transfer.services import run_in_foreground, start_transfer


class Command(BaseCommand):
    help = (
        "Translate the selected texts of finished MT-breaker runs with other translators into "
        "other languages and score them (seed 001 §3.3–3.5); see "
        "search/examples/breaker_transfer_offline.json. Workers run it; with --foreground this "
        "process runs every round and prints the matrix."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("config", type=Path, help="Transfer configuration (JSON object).")
        add_job_options(parser, printed="the matrix")

    def handle(self, *args, **options) -> None:
        config = read_json_object(options["config"])
        foreground = options["foreground"]
        what = "transfer configuration"
        transfer = start_job(start_transfer, config, foreground=foreground, what=what)
        if not foreground:
            page = f"/search/breaker/transfers/{transfer.pk}/"
            self.stdout.write(queued_note(f"transfer {transfer.pk}", page))
            return
        transfer = run_to_end(run_in_foreground, transfer, RunStateError)
        table = matrix(transfer)
        if options["json"]:
            rows = {
                row.run.pk: {
                    f"{t} {lang}": c.mean
                    for (t, lang), c in zip(table.columns, row.cells, strict=True)
                }
                for row in table.rows
            }
            summary = {"transfer": transfer.pk, "status": transfer.status}
            self.stdout.write(json.dumps({**summary, "cost": float(transfer.cost), "matrix": rows}))
            return
        self.stdout.write(outcome_line(transfer, f"transfer {transfer.pk}", "translations"))
        self.stdout.write("mean quality (lower = harder; * lowest in its column):")
        header = ["run"] + [f"{t} {lang}" for t, lang in table.columns]
        self.stdout.write(" | ".join(header))
        for row in table.rows:
            cells = [
                "–" if c.mean is None else f"{c.mean:.1f}{'*' if c.lowest else ''}"
                for c in row.cells
            ]
            self.stdout.write(" | ".join([f"#{row.run.pk} {row.label}", *cells]))
