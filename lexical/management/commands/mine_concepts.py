"""``python manage.py mine_concepts CORPUS [--param NAME=VALUE ...] [--params FILE]
[--foreground] [--json]``."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.command_io import (
    add_job_options,
    check_succeeded,
    queued_note,
    read_json_file,
    run_to_end,
)
from lexical.mining.params import MiningParams, MiningParamsError
from lexical.mining.selectors import corpus_by_reference
from lexical.mining.services import MiningStateError, run_in_foreground, start_mining


def _param(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise CommandError(f"--param {text!r}: expected NAME=VALUE")
    name = name.strip()
    if name == "pos_pipeline":
        return name, value
    try:
        return name, json.loads(value)
    except ValueError:
        return name, value


class Command(BaseCommand):
    help = (
        "Mine a parallel corpus for concepts with variations (seed 004 §2.1, App. B.1): "
        "lemmatise, align with eflomal, count, filter. Workers run it; with --foreground this "
        f"process runs every round. Parameters and defaults: {MiningParams().to_dict()}."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("corpus", help="Corpus id or name.")
        parser.add_argument(
            "--param", action="append", default=[], metavar="NAME=VALUE",
            help="One mining parameter, e.g. --param min_variation_count=30 (repeatable).",
        )  # fmt: skip
        parser.add_argument(
            "--params", help="A JSON object of parameters (a file, or - for stdin)."
        )
        add_job_options(parser, printed="the result")

    def handle(self, *args, **options) -> None:
        corpus = corpus_by_reference(options["corpus"])
        if corpus is None:
            raise CommandError(f"no corpus with id or name {options['corpus']!r}")
        params = read_json_file(options["params"]) if options["params"] else {}
        if not isinstance(params, dict):
            raise CommandError(f"{options['params']}: the parameters must be a JSON object")
        params.update(_param(text) for text in options["param"])
        try:
            job = start_mining(corpus, params, enqueue=not options["foreground"])
        except MiningParamsError as exc:
            raise CommandError(f"invalid mining parameters: {exc}") from None
        except MiningStateError as exc:
            raise CommandError(str(exc)) from None
        if not options["foreground"]:
            self.stdout.write(queued_note(f"mining job {job.pk}", f"/lexical/mining/{job.pk}/"))
            return
        job = run_to_end(run_in_foreground, job, MiningStateError)
        concepts: list[dict[str, Any]] = [
            {
                "id": c.pk,
                "lemma": c.lemma,
                "pos": c.pos,
                "entropy": round(c.entropy or 0.0, 5),
                "variations": {v.lemma: v.count for v in c.variations.all()},
            }
            for c in job.concepts.prefetch_related("variations")
        ]
        if options["json"]:
            summary = {"job": job.pk, "status": job.status, "error": job.error}
            self.stdout.write(json.dumps({**summary, "stats": job.stats, "concepts": concepts}))
            return
        check_succeeded(job, f"mining job {job.pk}")
        self.stdout.write(f"mining job {job.pk} finished: {len(concepts)} concepts")
        for c in concepts:
            pos = f" ({c['pos']})" if c["pos"] else ""
            variations = ", ".join(f"{k} {n}" for k, n in c["variations"].items())
            self.stdout.write(f"  {c['lemma']}{pos}: {variations}; entropy {c['entropy']:.4f}")
