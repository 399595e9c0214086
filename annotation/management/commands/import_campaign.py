"""Create an annotation campaign from a JSONL file (one item per line); all or nothing."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation import protocols, services


class Command(BaseCommand):
    help = "Import a campaign from JSONL; a bad line is reported by number and nothing is written."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--name", required=True)
        parser.add_argument("--protocol", required=True, choices=protocols.names())
        parser.add_argument("--overlap", type=int, default=1)
        parser.add_argument("--instructions", default="")

    def handle(self, *args, file: Path, name: str, protocol: str, overlap: int, **options):
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        try:
            with file.open("rb") as handle:
                campaign = services.import_campaign(
                    handle,
                    name=name,
                    protocol=protocol,
                    overlap=overlap,
                    instructions=options["instructions"],
                )
        except services.CampaignImportError as exc:
            lines = "\n".join(f"  {file}:{n}: {reason}" for n, reason in exc.errors)
            raise CommandError(f"nothing imported; fix these lines:\n{lines}") from exc
        except ValidationError as exc:
            raise CommandError(f"nothing imported: {'; '.join(exc.messages)}") from exc
        self.stdout.write(
            f"Imported campaign {campaign.name!r} (id {campaign.pk}, {campaign.protocol}, "
            f"overlap {campaign.overlap}) with {campaign.items.count()} items."
        )
