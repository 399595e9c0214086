from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.command_io import read_bytes
from lexical.dtails.selectors import import_report
from lexical.dtails.services import ImportRefused, import_dtails


class Command(BaseCommand):
    help = (
        "Import a DTAiLS CSV (expert_dataset.csv / train_dataset.csv of seed 004), with its "
        "optional xx.words file for POS tags and full variation lists, as imported concepts, "
        "examples and an example selection named --name. A row repeating an earlier one (the "
        "released af and gl expert files have one) is imported once and reported. All or "
        "nothing: on any error nothing is written and every bad line is listed."
    )

    def add_arguments(self, parser):
        parser.add_argument("csv", help="Path of the DTAiLS CSV file.")
        parser.add_argument("--words", help="Path of the xx.words file (optional).")
        parser.add_argument("--name", required=True, help="Name of the new selection.")
        parser.add_argument("--src-lang", default="en")
        parser.add_argument("--tgt-lang", required=True)
        parser.add_argument(
            "--keep-duplicates",
            action="store_true",
            help="Import a row repeating an earlier one as a second example, as the file has it "
            "(the selection then exports back to the same bytes), instead of once.",
        )

    def handle(self, *args, **options):
        words = read_bytes(options["words"]) if options["words"] else None
        try:
            selection = import_dtails(
                options["name"],
                options["src_lang"],
                options["tgt_lang"],
                read_bytes(options["csv"]),
                words,
                filename=Path(options["csv"]).name,
                keep_duplicates=options["keep_duplicates"],
            )
        except ImportRefused as exc:
            lines = [f"{field}: {message}" for field, ms in exc.errors.items() for message in ms]
            raise CommandError("nothing was written:\n" + "\n".join(lines)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported selection #{selection.pk} {selection.name!r}: "
                f"{selection.params['rows']} examples of {selection.concepts.count()} concepts."
            )
        )
        for note in import_report(selection):
            self.stdout.write(f"Note: {note}.")
