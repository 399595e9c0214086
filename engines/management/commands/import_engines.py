import sys

from django.core.management.base import BaseCommand, CommandError

from engines.services import EngineImportError, import_engines
from formats import strict_json


class Command(BaseCommand):
    help = (
        "Create or update engines by name from a JSON list of engine objects (the shape "
        "export_engines writes). All or nothing: any problem changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="path to the JSON file ('-' for standard input)")

    def handle(self, *args, **options):
        path = options["file"]
        try:
            if path == "-":
                data = strict_json.loads(sys.stdin.read())
            else:
                with open(path, "rb") as handle:
                    data = strict_json.loads(handle.read())
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc}") from exc
        except strict_json.JSONInputError as exc:
            raise CommandError(f"{path} is not valid JSON: {exc}") from exc
        try:
            result = import_engines(data)
        except EngineImportError as exc:
            raise CommandError(
                "nothing imported:\n" + "\n".join(f"  - {p}" for p in exc.problems)
            ) from exc
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
