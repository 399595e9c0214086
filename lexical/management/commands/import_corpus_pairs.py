from contextlib import ExitStack
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.command_io import open_bytes
from lexical.corpora.services import CorpusImportError, CorpusSource, import_corpus_pairs


class Command(BaseCommand):
    help = (
        "Import a parallel corpus, streamed: two aligned plain-text files as OPUS distributes "
        "them (--src FILE --tgt FILE), a TSV (--tsv FILE: source<TAB>target) or a JSONL file "
        '(--jsonl FILE: {"src", "tgt"} per line). All or nothing: a bad line is reported with '
        "its number and nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--src-lang", required=True)
        parser.add_argument("--tgt-lang", required=True)
        parser.add_argument("--src", type=Path, help="Source side (moses format).")
        parser.add_argument("--tgt", type=Path, help="Target side, aligned line by line.")
        parser.add_argument("--tsv", type=Path)
        parser.add_argument("--jsonl", type=Path)
        parser.add_argument("--description", default="")

    def _source(self, options, files: ExitStack) -> CorpusSource:
        """The files named by the options, opened on ``files`` (closed together, even when the
        second of two fails to open)."""
        given = [key for key in ("src", "tgt", "tsv", "jsonl") if options[key] is not None]
        if sorted(given) == ["src", "tgt"]:
            src, tgt = options["src"], options["tgt"]
            return CorpusSource(
                format="moses", src=files.enter_context(open_bytes(src)),
                tgt=files.enter_context(open_bytes(tgt)), src_name=src.name, tgt_name=tgt.name,
            )  # fmt: skip
        if given in (["tsv"], ["jsonl"]):
            path = options[given[0]]
            stream = files.enter_context(open_bytes(path))
            return CorpusSource(format=given[0], file=stream, file_name=path.name)
        raise CommandError("give --src FILE --tgt FILE, or --tsv FILE, or --jsonl FILE")

    def handle(self, *args, name: str, **options):
        with ExitStack() as files:
            source = self._source(options, files)
            try:
                corpus = import_corpus_pairs(
                    source,
                    name=name,
                    src_lang=options["src_lang"],
                    tgt_lang=options["tgt_lang"],
                    description=options["description"],
                )
            except CorpusImportError as exc:
                raise CommandError(f"nothing was written: {exc}") from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {corpus.name!r} (id {corpus.pk}): {corpus.size} sentence pairs, "
                f"{corpus.src_lang}→{corpus.tgt_lang}."
            )
        )
