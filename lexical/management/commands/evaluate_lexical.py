"""``python manage.py evaluate_lexical --selection ID --engine NAME:SETTING ... [--foreground]``."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandParser

from core.command_io import add_job_options, outcome_line, queued_note, run_to_end, start_job
from lexical.evaluation import selectors
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
        add_job_options(parser)

    def handle(self, *args, **options) -> None:
        config = {
            "selection": options["selection"],
            "entries": options["entries"],
            "runs": options["runs"],
            "name": options["name"],
        }
        if options["seed"] is not None:
            config["seed"] = options["seed"]
        foreground = options["foreground"]
        evaluation = start_job(
            start_lexical_evaluation, config, foreground=foreground, what="evaluation"
        )
        if not foreground:
            page = f"/lexical/evaluation/{evaluation.pk}/"
            self.stdout.write(queued_note(f"evaluation {evaluation.pk}", page))
            return
        evaluation = run_to_end(run_in_foreground, evaluation, EvaluationStateError)
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
        seed = f"seed {evaluation.seed}"
        self.stdout.write(outcome_line(evaluation, f"evaluation {evaluation.pk}", "answers", seed))
        self.stdout.write("entry | language | micro mean ± sd | macro mean ± sd")
        for line in lines:
            row = line.row
            name = line.entry.key if line.entry else "frequency baseline"
            self.stdout.write(
                f"{name} | {row.language} | {100 * row.micro_mean:.1f} ± {100 * row.micro_sd:.1f}"
                f" | {100 * row.macro_mean:.1f} ± {100 * row.macro_sd:.1f}"
            )
