"""Import DTAiLS files as concepts, examples and a selection; export selections and finished
lexical-selection studies in the released shape (seed 004; ADR 0031).

Import is all or nothing: every file problem is collected with its line and nothing is
written unless the whole file is good (one transaction).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from lexical.corpora.languages import clean_language_code
from lexical.dtails import format as dtails
from lexical.dtails.format import DtailsError, DtailsRow, WordsEntry
from lexical.models import (
    Concept,
    ConceptExample,
    ExampleSelection,
    SelectedExample,
    Variation,
)

SOURCE_TAG = "dtails"
MAX_LEMMA = 200  # Concept.lemma / Variation.lemma length
MAX_POS = 16
MAX_NAME = 200
# Line numbers of repeated rows kept in a selection's params: enough to find them.
REPORTED_REPEATS = 20


class ImportRefused(ValueError):
    """An import that changed nothing; ``errors`` maps the form field at fault to messages."""

    def __init__(self, errors: dict[str, list[str]]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))


@dataclass(frozen=True)
class ConceptPlan:
    """One concept to create: its word, POS, every variation (file order) and row variations."""

    lemma: str
    pos: str
    variations: tuple[str, ...]
    row_variations: tuple[str, ...]


def _file_errors(field: str, error: DtailsError) -> ImportRefused:
    messages = [f"line {line}: {message}" for line, message in error.errors]
    if error.more:
        messages.append(f"and {error.more} more error(s)")
    return ImportRefused({field: messages})


def _words_for(row: DtailsRow, entries: list[WordsEntry]) -> WordsEntry | str | None:
    """The words entry of ``row``'s concept whose variations include the row's; ``None`` when the
    words file lacks the concept, an error message when no entry of it fits."""
    same = [e for e in entries if e.concept == row.concept]
    if not same:
        return None
    fitting = [e for e in same if set(row.variations) <= set(e.variations)]
    if not fitting:
        missing = sorted(set(row.variations) - set(same[0].variations))
        return (
            f"the words file lists {row.concept!r} (line {same[0].line}) without "
            f"variation(s) {', '.join(map(repr, missing))}"
        )
    return fitting[0]  # several POS fitting: the first in the words file (ADR 0031)


def plan_concepts(
    rows: list[DtailsRow], words: list[WordsEntry]
) -> tuple[dict[str, ConceptPlan], list[tuple[int, str]]]:
    """Concepts keyed by their CSV word, and (line, problem) pairs. Rows of one concept must
    list the same variations in the same order (the released files do)."""
    plans: dict[str, ConceptPlan] = {}
    first_line: dict[str, int] = {}
    problems: list[tuple[int, str]] = []
    for row in rows:
        if len(row.concept) > MAX_LEMMA:
            problems.append((row.line, f"the concept is longer than {MAX_LEMMA} characters"))
            continue
        long_forms = [v for v in row.variations if len(v.split("/")[0]) > MAX_LEMMA]
        if long_forms:
            problems.append((row.line, f"a surface form is longer than {MAX_LEMMA} characters"))
            continue
        lemmas = [v.split("/")[0] for v in row.variations]
        clashing = sorted({lemma for lemma in lemmas if lemmas.count(lemma) > 1})
        if clashing:
            problems.append((row.line, f"two variations start with the same form {clashing[0]!r}"))
            continue
        known = plans.get(row.concept)
        if known is not None:
            if known.row_variations != row.variations:
                problems.append(
                    (row.line, f"variations {list(row.variations)} differ from "
                               f"{list(known.row_variations)} of {row.concept!r} on line "
                               f"{first_line[row.concept]}")
                )  # fmt: skip
            continue
        entry = _words_for(row, words)
        if isinstance(entry, str):
            problems.append((row.line, entry))
            continue
        variations = row.variations
        if entry is not None:
            variations += tuple(v for v in entry.variations if v not in row.variations)
            entry_lemmas = [v.split("/")[0] for v in variations]
            if len(set(entry_lemmas)) != len(entry_lemmas):
                problems.append(
                    (row.line, f"the words file (line {entry.line}) adds a variation that "
                               "starts with the same form as another")
                )  # fmt: skip
                continue
        plans[row.concept] = ConceptPlan(
            row.concept, entry.pos if entry else "", variations, row.variations
        )
        first_line[row.concept] = row.line
    return plans, problems


def word_span(text: str, word: str) -> tuple[int, int] | None:
    """The first whole-word, case-insensitive occurrence of ``word`` in ``text``."""
    match = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, flags=re.IGNORECASE)
    return (match.start(), match.end()) if match else None


def first_span(text: str, forms: Iterable[str]) -> tuple[int, int] | None:
    """The earliest occurrence of any of ``forms`` (the longest one where two start together)."""
    spans = [span for form in forms if (span := word_span(text, form))]
    return min(spans, key=lambda s: (s[0], -s[1])) if spans else None


def _check_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise ImportRefused({"name": ["Give the import a name."]})
    if len(name) > MAX_NAME:
        raise ImportRefused({"name": [f"The name is longer than {MAX_NAME} characters."]})
    if ExampleSelection.objects.filter(name=name).exists():
        raise ImportRefused(
            {"name": [f"A selection named {name!r} already exists; pick another name (an "
                      "import never adds to or replaces an existing selection)."]}
        )  # fmt: skip
    return name


def _languages(src_lang: str, tgt_lang: str) -> tuple[str, str]:
    errors: dict[str, list[str]] = {}
    codes = []
    for field, value in (("src_lang", src_lang), ("tgt_lang", tgt_lang)):
        try:
            codes.append(clean_language_code(value))
        except ValueError as error:
            errors[field] = [str(error)]
    if errors:
        raise ImportRefused(errors)
    return codes[0], codes[1]


def read_files(
    csv_data: bytes, words_data: bytes | None, *, keep_duplicates: bool = False
) -> tuple[list[DtailsRow], dict, list[tuple[int, int]]]:
    """Parse and check both files; returns the rows, the concept plans and the repeated rows
    ((line, earlier line) each)."""
    try:
        report = dtails.read_csv_report(csv_data, keep_duplicates=keep_duplicates)
    except DtailsError as error:
        raise _file_errors("csv_file", error) from None
    words: list[WordsEntry] = []
    if words_data is not None:
        try:
            words = dtails.read_words(words_data)
        except DtailsError as error:
            raise _file_errors("words_file", error) from None
    rows = report.rows
    plans, problems = plan_concepts(rows, words)
    if problems:
        raise _file_errors("csv_file", DtailsError(problems[: dtails.MAX_ERRORS]))
    return rows, plans, report.repeats


def import_dtails(
    name: str,
    src_lang: str,
    tgt_lang: str,
    csv_data: bytes,
    words_data: bytes | None = None,
    *,
    filename: str = "",
    keep_duplicates: bool = False,
) -> ExampleSelection:
    """Create imported concepts, their variations and examples, and a selection of the rows in
    file order. Raises :class:`ImportRefused` (field → messages) and writes nothing on error.
    A row repeating an earlier one is imported once and counted in ``params["repeated_rows"]``;
    with ``keep_duplicates`` it becomes a second example (as the file has it)."""
    src_lang, tgt_lang = _languages(src_lang, tgt_lang)
    _check_name(name)
    rows, plans, repeats = read_files(csv_data, words_data, keep_duplicates=keep_duplicates)
    labelled = Counter((row.concept, row.label) for row in rows)
    with transaction.atomic():
        name = _check_name(name)  # again, inside the transaction
        concepts: dict[str, Concept] = {}
        variations: dict[tuple[str, str], Variation] = {}
        for word, plan in plans.items():
            concept = Concept.objects.create(
                origin=Concept.Origin.IMPORTED,
                src_lang=src_lang,
                tgt_lang=tgt_lang,
                lemma=plan.lemma,
                pos=plan.pos,
                total_count=sum(labelled[(word, v)] for v in plan.variations),
                note=f"Imported from DTAiLS file {filename or name!r}.",
            )
            concepts[word] = concept
            for label in plan.variations:
                forms = label.split("/")
                variations[(word, label)] = Variation.objects.create(
                    concept=concept,
                    lemma=forms[0],
                    surface_forms=forms,
                    count=labelled[(word, label)],
                )
        examples = ConceptExample.objects.bulk_create(
            [_example(row, concepts[row.concept], variations[(row.concept, row.label)])
             for row in rows]
        )  # fmt: skip
        selection = ExampleSelection.objects.create(
            name=name,
            src_lang=src_lang,
            tgt_lang=tgt_lang,
            seed=0,
            params={
                "source": SOURCE_TAG,
                "file": filename,
                "rows": len(rows),
                "duplicates_kept": keep_duplicates,
                "repeated_rows": len(repeats),
                "repeated_lines": [line for line, _ in repeats[:REPORTED_REPEATS]],
                # The variations as the file lists them, so an export writes the same order.
                "variation_order": {
                    str(concepts[word].pk): list(plan.row_variations)
                    for word, plan in plans.items()
                },
            },
        )
        selection.concepts.set(concepts.values())
        SelectedExample.objects.bulk_create(
            SelectedExample(selection=selection, example=example, position=position)
            for position, example in enumerate(examples)
        )
    return selection


def import_dtails_upload(data: Mapping[str, Any]) -> ExampleSelection:
    """:func:`import_dtails` from the checked fields of the upload form or the API: ``name``,
    ``src_lang``, ``tgt_lang``, ``csv_file``, ``words_file`` (optional), ``keep_duplicates``."""
    words = data.get("words_file")
    return import_dtails(
        data["name"], data["src_lang"], data["tgt_lang"], data["csv_file"].read(),
        words.read() if words else None, filename=data["csv_file"].name,
        keep_duplicates=data["keep_duplicates"],
    )  # fmt: skip


def _example(row: DtailsRow, concept: Concept, variation: Variation) -> ConceptExample:
    src_span = word_span(row.source, row.concept)
    tgt_span = first_span(row.target, row.surface_forms())
    return ConceptExample(
        concept=concept,
        variation=variation,
        src=row.source,
        tgt=row.target,
        src_start=src_span[0] if src_span else None,
        src_end=src_span[1] if src_span else None,
        tgt_start=tgt_span[0] if tgt_span else None,
        tgt_end=tgt_span[1] if tgt_span else None,
        src_tokens=len(row.source.split()),
    )
