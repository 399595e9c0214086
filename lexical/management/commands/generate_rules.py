"""``python manage.py generate_rules --engine NAME [--engine NAME2] (--mining-job ID |
--selection ID | --concepts ID,ID) [--sentences N] [--max-tokens N] [--max-reasks N]
[--system-prompt-in-user] [--queue]``."""

from __future__ import annotations

import argparse

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.command_io import outcome_line, queued_note, run_to_end
from lexical.rules.selectors import job_concepts
from lexical.rules.services import (
    JobStateError,
    RuleConfigError,
    run_in_foreground,
    start_rule_jobs,
)


def _ids(text: str) -> list[int]:
    try:
        ids = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        message = f"{text[:100]!r} is not a comma-separated list of ids"
        raise argparse.ArgumentTypeError(message) from None
    return ids


class Command(BaseCommand):
    help = (
        "Write a rule per variation of each concept with one or more chat engines (seed 004 "
        "§3), one job per engine. Runs every round here (the workers' foreground twin) unless "
        "--queue hands the jobs to the workers."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--engine", action="append", required=True, help="Generator engine (repeatable)."
        )
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--mining-job", type=int, help="The active concepts of a mining job.")
        source.add_argument("--selection", type=int, help="The concepts of an example selection.")
        source.add_argument("--concepts", type=_ids, help="Concept ids, comma-separated.")
        parser.add_argument("--sentences", type=int, help="Sentences per variation (50).")
        parser.add_argument("--max-tokens", type=int, help="Sentences under N tokens (50).")
        parser.add_argument("--max-reasks", type=int, help="Re-asks per concept (2).")
        parser.add_argument(
            "--system-prompt-in-user",
            action="store_true",
            help="For models without a system prompt (Gemma, App. B.3).",
        )
        parser.add_argument("--queue", action="store_true", help="Hand the jobs to the workers.")

    def _config(self, options: dict) -> dict:
        params: dict = {}
        for option, key in (
            ("sentences", "sentences_per_variation"),
            ("max_tokens", "max_sentence_tokens"),
            ("max_reasks", "max_reasks"),
        ):
            if options[option] is not None:
                params[key] = options[option]
        if options["system_prompt_in_user"]:
            params["system_prompt_in_user"] = True
        return {
            "engines": options["engine"],
            "mining_job": options["mining_job"],
            "selection": options["selection"],
            "concepts": options["concepts"],
            "params": params,
        }

    def handle(self, *args, **options) -> None:
        try:
            jobs = start_rule_jobs(self._config(options), enqueue=options["queue"])
        except RuleConfigError as exc:
            raise CommandError(f"nothing created: {exc}") from None
        for job in jobs:
            if options["queue"]:
                page = f"/lexical/rules/jobs/{job.pk}/"
                self.stdout.write(queued_note(f"rule job {job.pk} ({job.engine})", page))
                continue
            job = run_to_end(run_in_foreground, job, JobStateError)
            name = f"rule job {job.pk} ({job.engine})"
            failed = f"{job.concepts_failed} failed"
            self.stdout.write(outcome_line(job, name, "concepts", failed))
            for outcome in job_concepts(job).filter(status="failed"):
                self.stdout.write(f"  {outcome.concept}: {outcome.error}")
