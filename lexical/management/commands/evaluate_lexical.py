"""``python manage.py evaluate_lexical --selection ID --engine NAME:SETTING ... [--foreground]``."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lexical.evaluation import selectors
from lexical.evaluation.config import EvaluationConfigError
from lexical.evaluation.services import (
    EvaluationStateError,
    run_in_foreground,
    start_lexical_evaluation,
)


class Command(BaseCommand):
    help = (
        "Evaluate engines on lexical selection over an example selection (seed 004 §4). "
        "--engine takes NAME:none, NAME:self, NAME:other:GENERATOR (chat engines without rules, "
        "with their own rules or another generator's) or NAME:translate (a translate engine "
        "whose output is matched to a variation); repeat it. Workers run it; with --foreground "
        "this process runs every round and prints the accuracy table."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--selection", type=int, required=True, help="Example selection id.")
        parser.add_argument(
            "--engine", action="append", required=True, dest="entries", metavar="NAME:SETTING"
        )
        parser.add_argument("--runs", type=int, default=3, help="Runs (fresh option order each).")
        parser.add_argument("--seed", type=int, help="Seed of the option orders (drawn if absent).")
        parser.add_argument("--name", default="", help="A name for the evaluation.")
        parser.add_argument("--foreground", action="store_true", help="Run it here, to the end.")
        parser.add_argument("--json", action="store_true", help="Print the summary as JSON.")

    def handle(self, *args, **options) -> None:
        config = {
            "selection": options["selection"],
            "entries": options["entries"],
            "runs": options["runs"],
            "name": options["name"],
        }
        if options["seed"] is not None:
            config["seed"] = options["seed"]
        try:
            evaluation = start_lexical_evaluation(config, enqueue=not options["foreground"])
        except EvaluationConfigError as exc:
            raise CommandError(f"invalid evaluation: {exc}") from None
        if not options["foreground"]:
            self.stdout.write(
                f"evaluation {evaluation.pk} queued for the workers; "
                f"follow it at /lexical/evaluation/{evaluation.pk}/"
            )
            return
        try:
            evaluation = run_in_foreground(evaluation.pk)
        except EvaluationStateError as exc:
            raise CommandError(str(exc)) from None
        lines = selectors.results(evaluation).summary
        if options["json"]:
            payload = {
                "evaluation": evaluation.pk,
                "status": evaluation.status,
                "seed": evaluation.seed,
                "cost": float(evaluation.cost),
                "summary": [selectors.summary_record(line) for line in lines],
            }
            self.stdout.write(json.dumps(payload))
            return
        self.stdout.write(
            f"evaluation {evaluation.pk} {evaluation.status}: {evaluation.items_done}/"
            f"{evaluation.items_total} answers, seed {evaluation.seed}, cost {evaluation.cost:.4f}"
            + (f" ({evaluation.error})" if evaluation.error else "")
        )
        self.stdout.write("entry | language | micro mean ± sd | macro mean ± sd")
        for line in lines:
            row = line.row
            name = line.entry.key if line.entry else "frequency baseline"
            self.stdout.write(
                f"{name} | {row.language} | {100 * row.micro_mean:.1f} ± {100 * row.micro_sd:.1f}"
                f" | {100 * row.macro_mean:.1f} ± {100 * row.macro_sd:.1f}"
            )
