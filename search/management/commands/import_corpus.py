from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.commands import named
from search.models import TopicTree
from search.topics.services import CorpusImportError, import_corpus


class Command(BaseCommand):
    help = (
        'Add text samples to a topic tree\'s leaves from JSONL: {"topic", "text", "source_url"} '
        "per line, the topic named by its leaf name or full path. All or nothing; duplicates "
        "are skipped and counted."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--tree", required=True, help="Name of the topic tree.")

    def handle(self, *args, file: Path, tree: str, **options):
        if not file.is_file():
            raise CommandError(f"{file} is not a file")
        found = named(TopicTree, tree, "topic tree")
        if found.status != TopicTree.Status.READY:
            raise CommandError(f"topic tree {tree!r} is {found.status}: it has no topics yet")
        try:
            report = import_corpus(found, file.read_bytes(), file_name=file.name)
        except CorpusImportError as exc:
            raise CommandError(f"{file} was not imported: {exc}") from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {report.created} samples into {found.name!r} from {report.lines} "
                f"lines ({report.duplicates} duplicates skipped)."
            )
        )
