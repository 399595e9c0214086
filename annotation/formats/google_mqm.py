"""Google's MQM TSV (the WMT MQM human-evaluation release, e.g. ``mqm_ted_ende.tsv``).

One row per error (or ``No-error``) per rater: ``system doc doc_id seg_id rater source target
category severity [comment]``, tab-separated with a header. ``doc_id`` is the segment's 1-based
position within its document. Google's 2023 files (``generalMT2023``, the side-by-side
``sxs_mqm_generalMT2023_ende.3ratingsPerSegment.tsv``) name those two columns ``docSegId
globalSegId``, end with a ``metadata`` column (JSON timings, not kept) and carry a stray header
cell (``# Documentation: ...``) that no row fills; both headers are read.

The erroneous span is marked with ``<v>…</v>`` in the target, or in the source for source-side
errors (omissions, source errors); the marks are removed here and kept as offsets into the clean
text (code points, end exclusive). The releases are read as they ship: a row whose marks do not
pair up (one in about 8,500 of the TED files) keeps its error with no span (``unbalanced``), and
:func:`unbalanced_lines` lists such rows for the import report.
The 2023 releases put a mark's space inside or outside the mark from one rater to the next
(``said. </v>`` against ``said</v>.``): a segment's rows must agree on their text up to runs of
white space, and the first row's text is kept.

Rows whose severity is ``HOTW-test`` are Anthea's "hands on the wheel" checks (an error the tool
planted to see whether the rater finds it: category ``Found`` or ``Missed``), not errors of the
translation: they are kept as checks (:func:`check_lines`), never scored, and do not make their
rater one of the segment's raters.

:func:`read_tsv` groups the rows into one :class:`MqmSegment` per (system, document, segment)
with every rater's errors; :func:`rater_penalties` scores them with the campaign MQM weights
(``No-error`` rows and the ``Neutral`` severity cost nothing; ``Source error`` is not the
translation's fault and costs nothing either).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from typing import Any

from annotation import languages, scoring
from annotation.formats.errors import FormatError

COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
# The same columns as Google's 2023 files name them.
COLUMNS_2023 = (
    "system", "doc", "docSegId", "globalSegId", "rater", "source", "target", "category", "severity",
)  # fmt: skip
NO_ERROR = "no-error"
CHECK_SEVERITY = "hotw-test"
FIELDS = (
    ("system, doc, seg_id", "system, doc_id, seg_id: one item per system × segment"),
    ("doc_id", "the segment's place in its document (kept in meta)"),
    ("source, target", "source, target with the <v>…</v> marks removed"),
    ("rater, category, severity, comment", "the raters' errors (kept in meta for items; "
     "scored for difficulty datasets)"),
)  # fmt: skip
# Categories that cost the translation nothing; "Source issue" is the 2023 name of Source error.
_FREE = {"no-error", "source error", "source issue"}


@dataclass(frozen=True)
class MqmError:
    category: str
    severity: str
    side: str  # "target" or "source"
    start: int | None  # None: no span marked, or marks that do not pair up
    end: int | None
    comment: str = ""
    line_number: int = 0
    unbalanced: bool = False  # the row's <v>…</v> marks did not pair up: the span is lost


@dataclass
class MqmSegment:
    system: str
    doc: str
    position: int  # doc_id in Google's files: the segment's place within its document
    seg_id: str
    source: str
    target: str
    line_number: int  # the segment's first row
    errors: dict[str, list[MqmError]] = field(default_factory=dict)  # rater -> errors
    checks: list[int] = field(default_factory=list)  # line numbers of its HOTW-test rows


# Google names its files after the pair, two-letter codes run together as the last word before
# the extension: mqm_ted_ende.tsv, mqm_generalMT2022_zhen.tsv,
# sxs_mqm_generalMT2023_ende.3ratingsPerSegment.tsv; other releases write en-de.
_RUN_TOGETHER = re.compile(r"^([a-z]{2})([a-z]{2})$")
# Two letters each: three-letter words are mostly not languages here (mqm-ted_ende.tsv).
_HYPHENATED = re.compile(r"^([a-z]{2})-([a-z]{2})$")


def language_pair_in_name(file_name: str) -> str | None:
    """``"en-de"`` for ``mqm_ted_ende.tsv`` or ``scores_en-de.tsv``; None when the name (its
    last ``_`` word before the first dot, or any ``_``/``.`` word like ``en-de``) names none."""
    name = file_name.replace("\\", "/").rsplit("/", 1)[-1]
    stem, *suffixes = name.split(".")
    words = stem.split("_")
    candidates = [words[-1]] + [w for w in [*reversed(words[:-1]), *suffixes] if "-" in w]
    for word in candidates:
        match = _RUN_TOGETHER.match(word) or _HYPHENATED.match(word)
        if match is None or match[1] == match[2]:
            continue
        try:
            codes = [languages.clean_language_code(code) for code in match.groups()]
        except ValueError:
            continue
        return "-".join(codes)
    return None


def _known_header(header: list[str]) -> bool:
    return tuple(header[: len(COLUMNS)]) in (COLUMNS, COLUMNS_2023)


def looks_like(data: bytes) -> bool:
    header = data.split(b"\n", 1)[0].decode("utf-8-sig", errors="replace").strip().split("\t")
    return _known_header(header)


_MARK = re.compile(r"(</?v>)")


def _unmark(text: str) -> tuple[str, int | None, int | None]:
    """``text`` without ``<v>``/``</v>`` and the offsets of the marked span (None if unmarked).

    Several marked pieces make one span from the first ``<v>`` to the last ``</v>``; marks that
    do not alternate ``<v>``, ``</v>``, ... raise ``ValueError``.
    """
    start = end = None
    clean: list[str] = []
    length = 0
    opened = False
    balanced = True
    for piece in _MARK.split(text):
        if piece == "<v>":
            balanced = balanced and not opened
            opened = True
            start = length if start is None else start
        elif piece == "</v>":
            balanced = balanced and opened
            opened = False
            end = length
        else:
            clean.append(piece)
            length += len(piece)
    if opened or not balanced:
        raise ValueError("unbalanced <v>…</v> marks")
    return "".join(clean), start, end


def _strip(text: str) -> str:
    """``text`` without any mark, paired or not."""
    return _MARK.sub("", text)


def same_text(a: str, b: str) -> bool:
    """Equal up to runs of white space (where raters' marks moved a space)."""
    return a == b or a.split() == b.split()


def _rows(data: bytes) -> list[tuple[int, dict[str, str]]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(f"line {line}", "not valid UTF-8") from None
    nul = text.find("\x00")
    if nul >= 0:
        # No database column takes a NUL; no release holds one.
        raise FormatError(f"line {text.count(chr(10), 0, nul) + 1}", "holds a NUL character")
    reader = csv.reader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(reader, None)
    if header is None or not _known_header(header):
        raise FormatError(
            "line 1",
            f"the header must start with {' '.join(COLUMNS)} (or, as in Google's 2023 files, "
            f"{' '.join(COLUMNS_2023)})",
        )
    # A tenth column is a rater's comment, or the 2023 files' metadata (timings: not kept).
    tenth = "comment" if len(header) < 10 or header[9].strip() == "comment" else "metadata"
    names = [*COLUMNS, tenth]
    rows = []
    for number, row in enumerate(reader, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(COLUMNS):
            raise FormatError(f"line {number}", f"{len(COLUMNS)} columns expected, got {len(row)}")
        rows.append((number, dict(zip(names, row, strict=False))))
    if not rows:
        raise FormatError("", "the file has no rows")
    return rows


def _error(row: dict[str, str], line_number: int) -> MqmError | None:
    category = row["category"].strip()
    if category.lower() == NO_ERROR:
        return None
    side = "source" if _MARK.search(row["source"]) else "target"
    try:
        _, start, end = _unmark(row[side])
        unbalanced = False
    except ValueError:
        # Google's releases hold a few such rows; refusing the file for them would lose the
        # whole release, and the rater's category and severity still score the segment.
        start = end = None
        unbalanced = True
    return MqmError(
        category=category,
        severity=row["severity"].strip().lower(),
        side=side,
        start=start,
        end=end,
        comment=row.get("comment", "").strip(),
        line_number=line_number,
        unbalanced=unbalanced,
    )


def read_tsv(data: bytes) -> list[MqmSegment]:
    """Every (system, document, segment) of the file with each rater's errors, in file order."""
    segments: dict[tuple[str, str, str], MqmSegment] = {}
    for number, row in _rows(data):
        where = f"line {number}"
        if not row["doc_id"].strip().isdigit():
            raise FormatError(where, f"doc_id must be a whole number, got {row['doc_id']!r}")
        source, target = _strip(row["source"]), _strip(row["target"])
        position = int(row["doc_id"])
        key = (row["system"], row["doc"], row["seg_id"])
        segment = segments.get(key)
        if segment is None:
            segment = segments[key] = MqmSegment(
                row["system"], row["doc"], position, row["seg_id"], source, target, number
            )
        elif not (same_text(segment.source, source) and same_text(segment.target, target)):
            raise FormatError(
                where,
                f"segment {row['seg_id']} of {row['doc']} by {row['system']} has another source "
                f"or target than on line {segment.line_number}",
            )
        if row["severity"].strip().lower() == CHECK_SEVERITY:
            segment.checks.append(number)
            continue
        error = _error(row, number)
        errors = segment.errors.setdefault(row["rater"], [])
        if error is not None:
            errors.append(error)
    return list(segments.values())


def check_lines(segments: list[MqmSegment]) -> list[int]:
    """The line numbers of the HOTW-test rows (checks, not errors)."""
    return sorted(number for segment in segments for number in segment.checks)


def unbalanced_lines(segments: list[MqmSegment]) -> list[int]:
    """The line numbers of rows whose marks did not pair up (their errors have no span)."""
    return sorted(
        error.line_number
        for segment in segments
        for errors in segment.errors.values()
        for error in errors
        if error.unbalanced
    )


def error_penalty(error: MqmError, weights: scoring.MqmWeights = scoring.DEFAULT_WEIGHTS) -> float:
    """Google's labels scored with the platform's weights (ADR 0004)."""
    if error.category.lower() in _FREE or error.severity == "neutral":
        return 0.0
    return scoring.span_penalty({"category": error.category, "severity": error.severity}, weights)


def rater_penalties(
    segment: MqmSegment, weights: scoring.MqmWeights = scoring.DEFAULT_WEIGHTS
) -> dict[str, float]:
    """Each rater's MQM penalty of the segment (0 for a rater who found no error)."""
    return {
        rater: round(sum(error_penalty(error, weights) for error in errors), 6)
        for rater, errors in segment.errors.items()
    }


def answer_spans(errors: list[MqmError], target: str) -> list[dict[str, Any]]:
    """A rater's errors as the spans of an MQM answer (the platform's campaign export reads
    back to the spans it was written from).

    Labels take the typology's spelling (``Style/Awkward`` → ``Style`` / ``Unnatural or
    awkward``); a source-side mark keeps ``"side": "source"``; an unmarked target error is the
    [MISSING] span at the end of the target, and so is an error whose marks did not pair up
    (the rater's label without its place). Raises ``ValueError`` for an unknown label.
    """
    spans = []
    for error in errors:
        category, subcategory = scoring.canonical_labels({"category": error.category})
        span: dict[str, Any] = {"start": error.start, "end": error.end}
        if error.side == "source":
            span["side"] = "source"
        if error.start is None:
            span = {"start": len(target), "end": len(target), "missing": True}
        span |= {"severity": error.severity, "category": category, "subcategory": subcategory}
        if error.comment:
            span["comment"] = error.comment
        spans.append(span)
    return spans


def read_items(data: bytes) -> list[dict[str, Any]]:
    """Campaign items: one per (system, document, segment), errors kept in ``meta``."""
    return [
        {
            "doc_id": segment.doc,
            "seg_id": segment.seg_id,
            "source": segment.source,
            "target": segment.target,
            "system": segment.system,
            "meta": {"google_mqm_raters": sorted(segment.errors), "doc_position": segment.position},
        }
        for segment in read_tsv(data)
    ]


def read_campaign_items(data: bytes, html: bool = False) -> list[dict[str, Any]]:
    """:func:`read_items` for a campaign import; refused for an ``html`` campaign, since the
    file's text is plain (its only marks, ``<v>…</v>``, are read here) and offsets count it."""
    if html:
        raise FormatError("", "a Google MQM TSV holds plain text: import it as plain text")
    return read_items(data)
