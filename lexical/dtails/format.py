"""The DTAiLS file formats (seed 004, github.com/Berkeley-NLP/Lex-Rules ``data/en-xx/``), pure.

Two files per language pair:

* ``expert_dataset.csv`` / ``train_dataset.csv``: header
  ``concept,source language text,target language text,variations,label``; ``variations`` is a
  Python list literal (``['meu/meus', 'miña/miñas']``), a variation joins its surface forms with
  ``/``, and ``label`` is the correct one of them.
* ``xx.words``: one concept a line, ``concept,POS,var1;var2;...``.

The release is written by pandas ``to_csv(index=False)``, i.e. Python's ``csv`` module with
minimal quoting, ``"`` doubled inside quoted cells, ``\\n`` line endings and ``str(list)`` for
the variations; :func:`write_csv` writes exactly that, so ``write_csv(read_csv(x)) == x`` for a
file in the released shape. Readers take bytes (the file as uploaded), accept a UTF-8 BOM and
CRLF, skip empty lines, and raise :class:`DtailsError` listing every problem with its line.
"""

from __future__ import annotations

import ast
import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from formats.spreadsheet import csv_text

__all__ = [
    "HEADER",
    "CsvReport",
    "DtailsError",
    "DtailsRow",
    "WordsEntry",
    "parse_variations",
    "read_csv",
    "read_csv_report",
    "read_words",
    "write_csv",
    "write_words",
]

HEADER = ("concept", "source language text", "target language text", "variations", "label")
MAX_VARIATIONS_LITERAL = 10_000
"""Characters of one ``variations`` cell: far above any real list, low enough that parsing a
hostile literal stays cheap."""
MAX_VARIATIONS = 50
MAX_ERRORS = 50
"""Errors reported per file; the rest are counted, not listed."""
BOM = "\ufeff"


class DtailsError(ValueError):
    """A file that is not valid DTAiLS; ``errors`` are ``(line, message)`` pairs, in order."""

    def __init__(self, errors: Sequence[tuple[int, str]], *, more: int = 0):
        self.errors = list(errors)
        self.more = more
        text = "; ".join(f"line {line}: {message}" for line, message in self.errors)
        if more:
            text += f"; and {more} more error(s)"
        super().__init__(text)


@dataclass(frozen=True)
class DtailsRow:
    """One sentence pair; ``line`` is where its record starts in the file (1-based)."""

    concept: str
    source: str
    target: str
    variations: tuple[str, ...]
    label: str
    line: int = 0

    def surface_forms(self, variation: str | None = None) -> list[str]:
        """The ``/``-separated forms of ``variation`` (default: the label)."""
        return (self.label if variation is None else variation).split("/")


@dataclass(frozen=True)
class WordsEntry:
    concept: str
    pos: str
    variations: tuple[str, ...]
    line: int = 0


class _Errors:
    def __init__(self) -> None:
        self.items: list[tuple[int, str]] = []
        self.more = 0

    def add(self, line: int, message: str) -> None:
        if len(self.items) < MAX_ERRORS:
            self.items.append((line, message))
        else:
            self.more += 1

    def raise_if_any(self) -> None:
        if self.items:
            raise DtailsError(self.items, more=self.more)


def _decode(data: bytes) -> str:
    """UTF-8 text without a BOM; bad bytes are an error naming the byte and its line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        byte = data[error.start : error.start + 1].hex()
        raise DtailsError(
            [(line, f"not UTF-8: byte 0x{byte} at offset {error.start} ({error.reason})")]
        ) from None
    if "\x00" in text:
        # Postgres text cannot hold NUL; no real dataset has one.
        line = text[: text.index("\x00")].count("\n") + 1
        raise DtailsError([(line, "contains a NUL byte (0x00); is this a binary file?")])
    return text.removeprefix(BOM)


def check_variation(variation: str) -> str | None:
    """Why ``variation`` is not a usable variation (``None`` when it is)."""
    if not variation.strip():
        return "an empty variation"
    if variation != variation.strip():
        return f"variation {variation!r} has leading or trailing spaces"
    if any(not form.strip() for form in variation.split("/")):
        return f"variation {variation!r} has an empty surface form"
    if any(c in variation for c in "\r\n\t"):
        return f"variation {variation!r} contains a line break or tab"
    return None


def parse_variations(cell: str) -> tuple[str, ...]:
    """The variations of a ``variations`` cell, a Python list literal of distinct strings.

    Never evaluates code: ``ast.literal_eval`` on a length-bounded cell that must start with
    ``[``, and the result must be a flat list of 2+ distinct, non-empty strings. Raises
    ``ValueError`` with the reason.
    """
    text = cell.strip()
    if len(text) > MAX_VARIATIONS_LITERAL:
        raise ValueError(f"variations is longer than {MAX_VARIATIONS_LITERAL} characters")
    if not (text.startswith("[") and text.endswith("]")):
        raise ValueError(f"variations must be a list like ['a', 'b'], got {cell[:60]!r}")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise ValueError(f"variations is not a Python list of strings: {cell[:60]!r}") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("variations must be a flat list of strings (no nested lists, numbers)")
    if len(value) < 2:
        raise ValueError(f"variations needs at least 2 variations, got {len(value)}")
    if len(value) > MAX_VARIATIONS:
        raise ValueError(f"variations has {len(value)} entries; at most {MAX_VARIATIONS}")
    for variation in value:
        problem = check_variation(variation)
        if problem:
            raise ValueError(problem)
    repeated = sorted({v for v in value if value.count(v) > 1})
    if repeated:
        raise ValueError(f"variations lists {', '.join(map(repr, repeated))} more than once")
    return tuple(value)


def _check_header(header: list[str]) -> str | None:
    if tuple(header) == HEADER:
        return None
    missing = [c for c in HEADER if c not in header]
    extra = [c for c in header if c not in HEADER]
    repeated = sorted({c for c in header if header.count(c) > 1})
    parts = []
    if missing:
        parts.append("missing column(s): " + ", ".join(map(repr, missing)))
    if extra:
        parts.append("unexpected column(s): " + ", ".join(map(repr, extra)))
    if repeated:
        parts.append("repeated column(s): " + ", ".join(map(repr, repeated)))
    if not parts:
        parts.append("columns are out of order")
    return "the header must be " + ",".join(HEADER) + " — " + "; ".join(parts)


def _records(text: str) -> Iterable[tuple[int, list[str]]]:
    """(first line, cells) of each non-empty CSV record."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise DtailsError([(start, f"not valid CSV ({error})")]) from None
        if cells and any(cell.strip() for cell in cells):
            yield start, cells
        start = reader.line_num + 1


def _row(line: int, cells: list[str], errors: _Errors) -> DtailsRow | None:
    if len(cells) != len(HEADER):
        errors.add(line, f"expected {len(HEADER)} cells, got {len(cells)}")
        return None
    concept, source, target, raw_variations, label = cells
    problems = [
        f"{name} is empty"
        for name, value in (("concept", concept), ("source language text", source),
                            ("target language text", target), ("label", label))
        if not value.strip()
    ]  # fmt: skip
    try:
        variations = parse_variations(raw_variations)
    except ValueError as error:
        problems.append(str(error))
        variations = ()
    if variations and label.strip() and label not in variations:
        problems.append(f"label {label!r} is not one of the variations {list(variations)}")
    for problem in problems:
        errors.add(line, problem)
    if problems:
        return None
    return DtailsRow(concept, source, target, variations, label, line)


def read_csv(data: bytes, *, keep_duplicates: bool = False) -> list[DtailsRow]:
    """The rows of :func:`read_csv_report`, without the report."""
    return read_csv_report(data, keep_duplicates=keep_duplicates).rows


@dataclass(frozen=True)
class CsvReport:
    rows: list[DtailsRow]
    repeats: list[tuple[int, int]]  # (line, the earlier line it repeats) per exact repeat


def read_csv_report(data: bytes, *, keep_duplicates: bool = False) -> CsvReport:
    """The rows of a DTAiLS CSV, in file order, and the rows that repeat an earlier one.
    Raises :class:`DtailsError` naming each bad line (wrong header, cell count, variations,
    label not among them, a sentence pair labelled twice differently).

    The released files are read as they ship: the af and gl expert files repeat a row (same
    concept, sentences and label), which is kept once and reported, or, with
    ``keep_duplicates``, kept as a second example so that the file writes back byte for byte.
    The same concept and sentence pair with another label is refused: the label is the
    variation the target sentence uses (seed 004 §2, "Dataset Construction"), so one of the two
    rows is wrong, and either guess would change the ground truth models are scored against."""
    text = _decode(data)
    records = _records(text)
    first = next(iter(records), None)
    if first is None:
        raise DtailsError(
            [(1, "the file is empty; the header " + ",".join(HEADER) + " is missing")]
        )
    header_line, header = first
    problem = _check_header([cell.strip() for cell in header])
    if problem:
        raise DtailsError([(header_line, problem)])
    errors = _Errors()
    rows: list[DtailsRow] = []
    repeats: list[tuple[int, int]] = []
    seen: dict[tuple[str, str, str], tuple[int, str]] = {}
    for line, cells in records:
        row = _row(line, cells, errors)
        if row is None:
            continue
        pair = (row.concept, row.source, row.target)
        earlier = seen.get(pair)
        if earlier is not None and earlier[1] != row.label:
            errors.add(
                line,
                f"labels the sentence pair of line {earlier[0]} {row.label!r} where that line "
                f"says {earlier[1]!r}; a sentence pair has one attested variation: remove or "
                "correct one of the two rows",
            )
            continue
        if earlier is not None:
            repeats.append((line, earlier[0]))
            if not keep_duplicates:
                continue
        seen.setdefault(pair, (line, row.label))
        rows.append(row)
    errors.raise_if_any()
    if not rows:
        raise DtailsError([(header_line, "the file has a header but no rows")])
    return CsvReport(rows, repeats)


def write_csv(rows: Iterable[DtailsRow]) -> bytes:
    """The released shape: pandas ``to_csv(index=False)`` of the five columns (see module doc)."""
    # No formula guard (it would change the data), but a bare "\r" in a text is quoted, which
    # pandas does not do and its own reader then splits into two rows.
    cells = ([r.concept, r.source, r.target, str(list(r.variations)), r.label] for r in rows)
    return csv_text(HEADER, cells, lineterminator="\n", guard=False).encode("utf-8")


def read_words(data: bytes) -> list[WordsEntry]:
    """The entries of an ``xx.words`` file (``concept,POS,var1;var2;...``), in file order."""
    text = _decode(data)
    errors = _Errors()
    entries: list[WordsEntry] = []
    seen: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        parts = raw.split(",", 2)
        if len(parts) != 3:
            errors.add(number, "expected concept,POS,var1;var2;... (two commas)")
            continue
        concept, pos, raw_variations = (part.strip() for part in parts)
        problems = []
        if not concept:
            problems.append("the concept is empty")
        if not pos or any(c.isspace() for c in pos) or len(pos) > 16:
            problems.append(f"POS {pos!r} must be one tag of at most 16 characters")
        variations = raw_variations.split(";")
        problems += [p for v in variations if (p := check_variation(v))]
        if len(variations) > MAX_VARIATIONS:
            problems.append(f"{len(variations)} variations; at most {MAX_VARIATIONS}")
        repeated = sorted({v for v in variations if variations.count(v) > 1})
        if repeated:
            problems.append(f"variation(s) {', '.join(map(repr, repeated))} listed twice")
        if (concept, pos) in seen:
            problems.append(f"{concept},{pos} is already on line {seen[(concept, pos)]}")
        for problem in problems:
            errors.add(number, problem)
        if not problems:
            seen[(concept, pos)] = number
            entries.append(WordsEntry(concept, pos, tuple(variations), number))
    errors.raise_if_any()
    return entries


def write_words(entries: Iterable[WordsEntry]) -> bytes:
    return "".join(f"{e.concept},{e.pos},{';'.join(e.variations)}\n" for e in entries).encode(
        "utf-8"
    )
