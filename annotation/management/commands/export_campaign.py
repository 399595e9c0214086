"""Write a campaign export to a file (or stdout), streamed: memory stays flat for any size."""

import sys

from django.core.management.base import BaseCommand, CommandError

from annotation import exports
from annotation.models import Campaign
from core.command_io import output_file


class Command(BaseCommand):
    help = (
        "Export a campaign: one line per annotation, or per item with --aggregate. "
        "Annotators appear by pseudonym only."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="campaign name")
        parser.add_argument("--format", choices=exports.FORMATS, default="jsonl")
        parser.add_argument(
            "--aggregate", action="store_true", help="one row per item (jsonl or csv)"
        )
        parser.add_argument("--output", required=True, help="file to write, or - for stdout")
        parser.add_argument("--chunk-size", type=int, default=exports.DEFAULT_CHUNK_SIZE)

    def handle(self, *args, name, format, aggregate, output, chunk_size, **options):
        if chunk_size < 1:
            raise CommandError(f"--chunk-size must be at least 1 (got {chunk_size})")
        try:
            campaign = Campaign.objects.get(name=name)
        except Campaign.DoesNotExist:
            raise CommandError(f"no campaign named {name!r}") from None
        try:
            chunks = exports.stream_export(
                campaign, format, aggregate=aggregate, chunk_size=chunk_size
            )
        except exports.ExportError as exc:
            raise CommandError(str(exc)) from None
        header = 0 if format == "jsonl" else 1
        if output == "-":
            self._write(chunks, sys.stdout)
            return
        # Written beside the target and renamed at the end (output_file): an interrupted export
        # never leaves a truncated file under the requested name.
        with output_file(output) as handle:
            records = self._write(chunks, handle) - header
        self.stdout.write(f"Wrote {records} records to {output}")

    @staticmethod
    def _write(chunks, handle) -> int:
        """Write every chunk; each chunk the exporters yield is one record (or the header)."""
        count = 0
        for chunk in chunks:
            handle.write(chunk)
            count += 1
        return count
