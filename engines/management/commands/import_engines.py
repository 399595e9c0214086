import json
import sys

from django.core.management.base import BaseCommand, CommandError

from engines.services import EngineImportError, import_engines


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
                data = json.load(sys.stdin)
            else:
                with open(path, encoding="utf-8") as handle:
                    data = json.load(handle)
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc}") from exc
        except json.JSONDecodeError as exc:
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
