"""Campaign files of the tools this field already uses, read into the platform's item dicts.

Pure Python (no Django): each reader turns a whole file into the same item dicts a JSONL line
holds (``doc_id``, ``seg_id``, ``source``, ``target``, ``system``, ``kind``, ``expected``,
``prefill_spans``, ``meta``, ...), which the import service then validates against the
campaign's protocol like any other item. :func:`sniff` tells which format a file looks like, so
a wrong choice gets a message that names the right one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from annotation import html_text
from annotation.formats import appraise, google_mqm, pearmut
from annotation.formats.errors import WHERE, FormatError
from formats import strict_json

__all__ = ["FORMATS", "WHERE", "FileFormat", "FormatError", "documented", "read_items", "sniff"]


Fields = tuple[tuple[str, str], ...]
"""(a field of the file, what the platform makes of it): the import page's table."""

JSONL_FIELDS: Fields = (
    ("doc_id, seg_id", "the document and the segment (required for esa and mqm)"),
    ("src_lang, tgt_lang", "BCP 47 codes; the campaign's languages when absent"),
    ("source, target, system", "the texts to judge and the system that translated"),
    ("kind", "regular (default), attention_check or tutorial"),
    ("expected", "for checks and tutorials: score_min, score_max, spans, no_spans, explanation "
     "(feedback after the answer); instruction: tutorials only, shown with the item"),
    ("prefill_spans", "spans shown pre-marked: start, end (code points, end exclusive), "
     "severity, category, subcategory"),
    ("question, choices", "for choice campaigns"),
    ("origin, origin_ref, meta", "where the item comes from; anything else to keep"),
)  # fmt: skip


@dataclass(frozen=True)
class FileFormat:
    name: str
    label: str  # reads well after "this looks like"
    # (file, HTML?) -> items; None: the import service's JSONL path. With HTML true, the
    # reader converts its tool's offsets over the visible text of the item's HTML.
    read: Callable[[bytes, bool], list[dict[str, Any]]] | None
    example: str = ""  # a small file of this format under static/annotation/examples/
    fields: Fields = ()


FORMATS: dict[str, FileFormat] = {
    "auto": FileFormat("auto", "whatever the file looks like", None),
    "jsonl": FileFormat(
        "jsonl", "a JSONL file (one item per line)", None, "items.jsonl", JSONL_FIELDS
    ),
    "appraise": FileFormat(
        "appraise",
        "an Appraise batches file",
        appraise.read_batches,
        "appraise-batches.json",
        appraise.FIELDS,
    ),
    "google-mqm": FileFormat(
        "google-mqm",
        "a Google MQM TSV file",
        google_mqm.read_campaign_items,
        "google-mqm.tsv",
        google_mqm.FIELDS,
    ),
    "pearmut": FileFormat(
        "pearmut",
        "a Pearmut campaign file",
        pearmut.read_campaign,
        "pearmut-campaign.json",
        pearmut.FIELDS,
    ),
}


def documented() -> list[FileFormat]:
    """The formats with an example file and a table of fields, as the import page lists them."""
    return [f for f in FORMATS.values() if f.example]


def _json_document(data: bytes) -> Any:
    try:
        return strict_json.loads(data)
    except strict_json.JSONInputError:
        return None


def sniff(data: bytes) -> str | None:
    """The format ``data`` looks like, or None when it looks like none of them."""
    if google_mqm.looks_like(data):
        return "google-mqm"
    document = _json_document(data)
    if document is not None and appraise.looks_like(document):
        return "appraise"
    if document is not None and pearmut.looks_like(document):
        return "pearmut"
    first = next((line for line in data.splitlines() if line.strip()), b"")
    try:
        return "jsonl" if isinstance(strict_json.loads(first), dict) else None
    except strict_json.JSONInputError:
        return None


def read_items(
    file_format: str, data: bytes, *, text_format: str = html_text.PLAIN
) -> list[dict[str, Any]]:
    """Items of a whole file in ``file_format`` (not ``jsonl``); raises :class:`FormatError`.

    With ``text_format="html"`` span offsets count the visible text of the items' HTML
    (the import service then turns the text itself into visible text, ADR 0033).
    """
    reader = FORMATS[file_format].read
    if reader is None:
        raise ValueError(f"{file_format} files are read line by line by the import service")
    return reader(data, text_format == html_text.HTML)
