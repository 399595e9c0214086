"""Importing a parallel corpus: streamed, chunked, all or nothing.

The readers (``lexical.corpora.reading``) yield one pair at a time; pairs are written with
``bulk_create`` in chunks of :data:`CHUNK_SIZE` inside one transaction, so a corpus of millions
of pairs imports in bounded memory and a bad line anywhere (even the last) leaves nothing
behind: no corpus row, no pair.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from django.db import IntegrityError, transaction

from lexical.corpora import reading
from lexical.corpora.languages import clean_language_code
from lexical.models import ParallelCorpus, SentencePair

__all__ = [
    "CHUNK_SIZE",
    "CorpusImportError",
    "CorpusSource",
    "check_corpus_options",
    "import_corpus_pairs",
    "import_uploaded_corpus",
]

CHUNK_SIZE = 5000
MAX_NAME = 200


class CorpusImportError(Exception):
    """Refused before or while importing; ``field`` names the option or file at fault
    (``name``, ``src_lang``, ``file``...) and ``line`` the 1-based line, when one applies."""

    def __init__(self, message: str, *, field: str = "file", line: int = 0, file: str = ""):
        super().__init__(message)
        self.field, self.line, self.file = field, line, file


@dataclass(frozen=True)
class CorpusSource:
    """The file(s) to import: ``moses`` needs ``src`` and ``tgt``; ``tsv`` and ``jsonl`` one
    ``file``. Streams are binary; names appear in error messages."""

    format: str
    file: IO[bytes] | None = None
    src: IO[bytes] | None = None
    tgt: IO[bytes] | None = None
    file_name: str = ""
    src_name: str = "source file"
    tgt_name: str = "target file"

    @classmethod
    def from_upload(cls, data: Mapping[str, Any]) -> CorpusSource:
        """The source the checked fields of the upload form or the API name: ``format`` with
        ``src_file`` and ``tgt_file`` (moses) or ``file`` (uploaded files, which have names)."""
        if data["format"] == "moses":
            return cls(
                format="moses",
                src=data["src_file"],
                tgt=data["tgt_file"],
                src_name=data["src_file"].name,
                tgt_name=data["tgt_file"].name,
            )
        return cls(format=data["format"], file=data["file"], file_name=data["file"].name)

    def pairs(self) -> Iterator[reading.Pair]:
        if self.format == "moses":
            if self.src is None or self.tgt is None:
                raise CorpusImportError("the moses format needs a source and a target file")
            return reading.moses_pairs(
                self.src, self.tgt, src_name=self.src_name, tgt_name=self.tgt_name
            )
        if self.file is None:
            raise CorpusImportError(f"the {self.format} format needs one file")
        if self.format == "tsv":
            return reading.tsv_pairs(self.file, name=self.file_name)
        if self.format == "jsonl":
            return reading.jsonl_pairs(self.file, name=self.file_name)
        raise CorpusImportError(
            f"unknown format {self.format!r}; one of: {', '.join(reading.FORMATS)}",
            field="format",
        )


def check_corpus_options(*, name: str, src_lang: str, tgt_lang: str) -> tuple[str, str, str]:
    """``(name, src_lang, tgt_lang)`` cleaned, or :class:`CorpusImportError` for the first bad
    one (a form or serializer calls this before the file is read)."""
    name = (name or "").strip()
    if not name:
        raise CorpusImportError("a corpus needs a name", field="name")
    if len(name) > MAX_NAME:
        raise CorpusImportError(f"a name has at most {MAX_NAME} characters", field="name")
    if ParallelCorpus.objects.filter(name=name).exists():
        raise CorpusImportError(f"there is already a corpus named {name!r}", field="name")
    cleaned = []
    for field, code in (("src_lang", src_lang), ("tgt_lang", tgt_lang)):
        try:
            cleaned.append(clean_language_code(code))
        except ValueError as exc:
            raise CorpusImportError(str(exc), field=field) from None
    if cleaned[0] == cleaned[1]:
        raise CorpusImportError("source and target languages are the same", field="tgt_lang")
    return name, cleaned[0], cleaned[1]


def _chunks(pairs: Iterable[reading.Pair], size: int) -> Iterator[list[reading.Pair]]:
    chunk: list[reading.Pair] = []
    for pair in pairs:
        chunk.append(pair)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def import_corpus_pairs(
    source: CorpusSource,
    *,
    name: str,
    src_lang: str,
    tgt_lang: str,
    description: str = "",
    created_by=None,
    chunk_size: int = CHUNK_SIZE,
) -> ParallelCorpus:
    """Create a corpus with every pair of ``source`` (positions are the 1-based lines), or
    nothing: :class:`CorpusImportError` with the line for malformed or misaligned input."""
    name, src_lang, tgt_lang = check_corpus_options(name=name, src_lang=src_lang, tgt_lang=tgt_lang)
    pairs = source.pairs()
    try:
        with transaction.atomic():
            corpus = ParallelCorpus.objects.create(
                name=name,
                src_lang=src_lang,
                tgt_lang=tgt_lang,
                source_format=source.format,
                description=description,
                status=ParallelCorpus.Status.IMPORTING,
                created_by=created_by,
            )
            size = 0
            for chunk in _chunks(pairs, chunk_size):
                SentencePair.objects.bulk_create(
                    SentencePair(corpus=corpus, position=line, src=src, tgt=tgt)
                    for line, src, tgt in chunk
                )
                size += len(chunk)
            if not size:
                raise CorpusImportError("the file has no sentence pair")
            corpus.size = size
            corpus.status = ParallelCorpus.Status.READY
            corpus.save(update_fields=["size", "status"])
    except reading.PairFormatError as exc:
        raise CorpusImportError(str(exc), line=exc.line, file=exc.file) from None
    except IntegrityError:
        # Two imports with one name at once: the unique name refuses the second.
        raise CorpusImportError(f"there is already a corpus named {name!r}", field="name") from None
    return corpus


def import_uploaded_corpus(
    source: CorpusSource, options: Mapping[str, Any], *, created_by=None
) -> ParallelCorpus:
    """:func:`import_corpus_pairs` with the options the upload form or the API checked
    (``name``, ``src_lang``, ``tgt_lang``, ``description``): the page and the API take the same."""
    return import_corpus_pairs(
        source,
        name=options["name"],
        src_lang=options["src_lang"],
        tgt_lang=options["tgt_lang"],
        description=options["description"],
        created_by=created_by,
    )
