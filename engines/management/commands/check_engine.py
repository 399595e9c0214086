from django.core.management.base import BaseCommand, CommandError

from engines.interfaces import EngineError
from engines.services import SAMPLE_TEXT, check_engine


class Command(BaseCommand):
    help = (
        "Make one real sample call to an engine (cache bypassed) and print the output and "
        "latency. Exit status 0 only when the call succeeded and its answer parsed."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="engine name")
        parser.add_argument("--src", default="en", help="source language (default en)")
        parser.add_argument("--tgt", default="de", help="target language (default de)")
        parser.add_argument("--text", default=SAMPLE_TEXT, help="sample source text")

    def handle(self, *args, **options):
        try:
            result = check_engine(
                options["name"], src_lang=options["src"], tgt_lang=options["tgt"],
                text=options["text"],
            )  # fmt: skip
        except EngineError as exc:
            raise CommandError(exc.message) from exc
        if not result.ok:
            kind = "permanent" if result.permanent else "transient"
            raise CommandError(
                f"{options['name']}: {kind} error after {result.latency_ms:.0f} ms: {result.error}"
            )
        self.stdout.write(f"{result.operation}: {result.sample}")
        self.stdout.write(result.output)
        self.stdout.write(
            self.style.SUCCESS(f"{options['name']}: ok in {result.latency_ms:.0f} ms")
        )
