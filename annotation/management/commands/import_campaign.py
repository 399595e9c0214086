"""Create an annotation campaign from a file (JSONL, Appraise batches, ...); all or nothing."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation import formats, html_text, protocols
from annotation.formats import offsets
from annotation.refusals import CampaignImportError
from annotation.services.campaigns import import_campaign
from core.command_io import problems_error


def _where(file: Path, unit: str, number: int) -> str:
    """``file:12: `` for a line, ``file: item 12: `` for an item, ``file: `` for the file."""
    if number == 0:
        return f"{file}: "
    return f"{file}:{number}: " if unit == "line" else f"{file}: {unit} {number}: "


def _messages(exc: ValidationError) -> str:
    """The messages on one line, each after the field it is about (``overlap: ...``)."""
    if hasattr(exc, "error_dict"):
        return "; ".join(f"{field}: {m}" for field, ms in exc.message_dict.items() for m in ms)
    return "; ".join(exc.messages)


class Command(BaseCommand):
    help = (
        "Import a campaign from JSONL, an Appraise batches file, a Google MQM TSV or a Pearmut "
        "campaign file; a bad line or item is reported by number and nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--name", required=True)
        parser.add_argument("--protocol", required=True, choices=protocols.names())
        parser.add_argument(
            "--format",
            dest="file_format",
            default="auto",
            choices=list(formats.FORMATS),
            help="The file's format (default: recognise it).",
        )
        parser.add_argument(
            "--offset-unit",
            default="codepoint",
            choices=list(offsets.UNITS),
            help="How a JSONL file's span offsets count (utf16: JavaScript string indices).",
        )
        parser.add_argument(
            "--text-format",
            default=html_text.PLAIN,
            choices=list(html_text.TEXT_FORMATS),
            help="html: read the items' text as HTML (sanitised; spans count its visible text).",
        )
        parser.add_argument("--overlap", type=int, default=1)
        parser.add_argument("--src-lang", default="", help="For items that name no language.")
        parser.add_argument("--tgt-lang", default="", help="For items that name no language.")
        parser.add_argument("--instructions", default="")

    def handle(
        self, *args, file: Path, name: str, protocol: str, overlap: int, file_format: str, **options
    ):
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        try:
            with file.open("rb") as handle:
                campaign = import_campaign(
                    handle,
                    name=name,
                    protocol=protocol,
                    file_format=file_format,
                    offset_unit=options["offset_unit"],
                    text_format=options["text_format"],
                    overlap=overlap,
                    **{key: options[key] for key in ("src_lang", "tgt_lang") if options[key]},
                    instructions=options["instructions"],
                )
        except CampaignImportError as exc:
            where = [_where(file, exc.unit, n) + reason for n, reason in exc.errors]
            raise problems_error("nothing imported", where) from None
        except ValidationError as exc:
            raise CommandError(f"nothing imported: {_messages(exc)}") from None
        self.stdout.write(
            f"Imported campaign {campaign.name!r} (id {campaign.pk}, {campaign.protocol}, "
            f"overlap {campaign.overlap}) with {campaign.items.count()} items."
        )
