from django.core.management.base import BaseCommand

from core.command_io import problems_error, read_json_file
from engines.services import EngineImportError, import_engines


class Command(BaseCommand):
    help = (
        "Create or update engines by name from a JSON list of engine objects (the shape "
        "export_engines writes). All or nothing: any problem changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="path to the JSON file ('-' for standard input)")

    def handle(self, *args, **options):
        data = read_json_file(options["file"])
        try:
            result = import_engines(data)
        except EngineImportError as exc:
            raise problems_error("nothing imported", exc.problems) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"{len(result['created'])} created, {len(result['updated'])} updated"
                + (
                    f": {', '.join(result['created'] + result['updated'])}"
                    if any(result.values())
                    else ""
                )
            )
        )
