import json

from django.core.management.base import BaseCommand

from core.command_io import write_out
from engines.services import export_engines


class Command(BaseCommand):
    help = "Write every engine as a JSON list (the shape import_engines reads); never a key."

    def add_arguments(self, parser):
        parser.add_argument("--output", "-o", help="file to write (default: standard output)")

    def handle(self, *args, **options):
        text = json.dumps(export_engines(), indent=2, ensure_ascii=False) + "\n"
        if write_out(self.stdout, text, options["output"]):
            self.stdout.write(self.style.SUCCESS(f"wrote {options['output']}"))
