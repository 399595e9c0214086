from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from search.topics.services import TopicTreeError, import_topic_tree


class Command(BaseCommand):
    help = (
        'Import a topic tree from nested JSON ({"Root": {"Child": {...}}}) or a JSON list of '
        "topic names. All or nothing: a bad tree is reported and nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--name", required=True, help="Name of the new tree (unique).")
        parser.add_argument("--language", default="en", help="Language of the topic names.")
        parser.add_argument("--description", default="")

    def handle(self, *args, file: Path, **options):
        if not file.is_file():
            raise CommandError(f"{file} is not a file")
        try:
            tree = import_topic_tree(
                file.read_bytes(),
                name=options["name"],
                language=options["language"],
                description=options["description"],
                source_file_name=file.name,
            )
        except TopicTreeError as exc:
            raise CommandError(f"{file} was not imported; nothing was written: {exc}") from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported topic tree {tree.name!r} (id {tree.pk}): {tree.n_topics} topics, "
                f"{tree.n_leaves} leaves."
            )
        )
