"""``python manage.py run_breaker_transfer CONFIG.json [--foreground] [--json]``."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from search.breaker.config import BreakerConfigError
from search.breaker.services import RunStateError
from search.breaker.transfer.selectors import matrix
from search.breaker.transfer.services import run_in_foreground, start_transfer
from search.management.commands.run_breaker import Command as RunBreaker


class Command(BaseCommand):
    help = (
        "Translate the selected texts of finished MT-breaker runs with other translators into "
        "other languages and score them (seed 001 §3.3–3.5); see "
        "search/examples/breaker_transfer_offline.json. Workers run it; with --foreground this "
        "process runs every round and prints the matrix."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("config", type=Path, help="Transfer configuration (JSON object).")
        parser.add_argument("--foreground", action="store_true", help="Run it here, to the end.")
        parser.add_argument("--json", action="store_true", help="Print the matrix as JSON.")

    def handle(self, *args, **options) -> None:
        config = RunBreaker._read(options["config"])
        try:
            transfer = start_transfer(config, enqueue=not options["foreground"])
        except BreakerConfigError as exc:
            raise CommandError(f"invalid transfer configuration: {exc}") from None
        if not options["foreground"]:
            self.stdout.write(
                f"transfer {transfer.pk} queued for the workers; "
                f"follow it at /search/breaker/transfers/{transfer.pk}/"
            )
            return
        try:
            transfer = run_in_foreground(transfer.pk)
        except RunStateError as exc:
            raise CommandError(str(exc)) from None
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
        self.stdout.write(
            f"transfer {transfer.pk} {transfer.status}: {transfer.items_done}/"
            f"{transfer.items_total} translations, cost {transfer.cost:.4f}"
            + (f" ({transfer.error})" if transfer.error else "")
        )
        self.stdout.write("mean quality (lower = harder; * lowest in its column):")
        header = ["run"] + [f"{t} {lang}" for t, lang in table.columns]
        self.stdout.write(" | ".join(header))
        for row in table.rows:
            cells = [
                "–" if c.mean is None else f"{c.mean:.1f}{'*' if c.lowest else ''}"
                for c in row.cells
            ]
            self.stdout.write(" | ".join([f"#{row.run.pk} {row.label}", *cells]))
