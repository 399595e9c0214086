"""A WMT crowd-DA human evaluation release (e.g. ``wmt22-news-systems/humaneval/DA/
newstest2022-toen/``), as it ships (no Django).

Two files a language pair, whitespace-separated with a header line:

* ``ad-seg-scores-{src}-{tgt}.csv``: ``SYS SID RAW.SCR Z.SCR N``, the mean raw and z score of
  each (system, segment) over its N judgments. These become the dataset's scores (raw or z,
  chosen; the other is kept as an extra field, N as ``n_judgments``).
* ``ad-{src}{tgt}-good-stnd.csv``: every judgment by workers who passed quality control,
  ``HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time``; ``score``
  is the judgment standardised per worker (z), ``type`` is ``SYSTEM``, ``REPEAT`` (an item shown
  again to check consistency) or a quality-control type (``REF``, ``BAD_REF``, ...). SYSTEM and
  REPEAT rows are kept as the pair's individual judgments (``REPEAT`` marked); quality-control
  rows are checks: counted in the report, never scored. The file has no raw scores (NaN).

Neither file holds the texts: segments are keyed by ``SID`` with an empty source.

What the reader decides:

* a (system, segment) twice in the means file: the same numbers again are skipped and counted;
  other numbers are refused, naming both lines. A judgment row identical to an earlier one
  (every field) is skipped and counted the same way.
* ``NA`` or ``None`` in the means file leaves the cell unscored (counted).
* a judgment of a (system, segment) the means file does not have is skipped and counted.
* a pair's judgments file is optional (the report says when it is missing); a judgments file
  without its means file is refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from difficulty.dataset_format import (
    MAX_SYSTEM_NAME,
    DatasetFormatError,
    ParsedSegment,
    split_language_pair,
)
from difficulty.releases.judgments import JudgmentRows
from difficulty.releases.text import decode_lines, parse_number, refuse
from formats.archives import ReleaseFiles

__all__ = [
    "JUDGMENT_COLUMNS",
    "MEANS_COLUMNS",
    "DaRelease",
    "looks_like",
    "read_wmt_da",
    "sniff",
    "wanted",
]

MEANS_COLUMNS = ("SYS", "SID", "RAW.SCR", "Z.SCR", "N")
JUDGMENT_COLUMNS = ("WorkerId", "sys_id", "type", "sid", "score")
SCORE_KINDS = {"z": "Z.SCR", "raw": "RAW.SCR"}
_MEANS = re.compile(r"(?:^|/)ad-seg-scores-(?P<src>[A-Za-z]{2,3})-(?P<tgt>[A-Za-z]{2,3})\.csv$")
_JUDGMENTS = re.compile(r"(?:^|/)ad-(?P<pair>[A-Za-z]{4,6})-good-stnd(?P<redup>-redup)?\.csv$")
_MISSING = {"NA", "None", "NaN"}  # R and Python spell an empty mean so
REPORTED_LINES = 20


def wanted(path: str) -> bool:
    return bool(_MEANS.search(path) or _JUDGMENTS.search(path))


def sniff(head: bytes) -> str | None:
    """``"means"`` or ``"judgments"`` when a file's first line is one of the two headers."""
    fields = head.decode("utf-8-sig", errors="replace").split()
    if tuple(fields[: len(MEANS_COLUMNS)]) == MEANS_COLUMNS:
        return "means"
    if fields[:2] == ["HITId", "WorkerId"] or set(JUDGMENT_COLUMNS) <= set(fields):
        return "judgments"
    return None


def looks_like(names: Sequence[str]) -> bool:
    return any(_MEANS.search(name) for name in names)


@dataclass
class DaRelease:
    segments: list[ParsedSegment]
    judgments: dict[str, JudgmentRows]
    report: dict[str, Any]


@dataclass
class _Pair:
    lp: str
    means: str
    judgments: str = ""
    ignored: list[str] = field(default_factory=list)


def _pairs(files: ReleaseFiles, language_pairs: Sequence[str]) -> list[_Pair]:
    names = files.names()
    pairs: dict[str, _Pair] = {}
    for name in names:
        match = _MEANS.search(name)
        if match:
            lp = f"{match['src']}-{match['tgt']}"
            if lp in pairs:
                raise DatasetFormatError(
                    [f"{files.label}: two means files for {lp}: {pairs[lp].means} and {name}"]
                )
            pairs[lp] = _Pair(lp, name)
    for name in sorted(names, key=lambda n: "-redup" in n):
        match = _JUDGMENTS.search(name)
        if not match:
            continue
        pair = next((p for p in pairs.values() if p.lp.replace("-", "") == match["pair"]), None)
        if pair is None:
            raise DatasetFormatError(
                [f"{name}: judgments without their means file (ad-seg-scores-XX-YY.csv)"]
            )
        if pair.judgments:
            pair.ignored.append(name)  # the -redup copy of a file already read
        else:
            pair.judgments = name
    if not pairs:
        raise DatasetFormatError([f"{files.label}: no WMT DA means file (ad-seg-scores-XX-YY.csv)"])
    missing = [lp for lp in language_pairs if lp not in pairs]
    if missing:
        raise DatasetFormatError(
            [
                f"{files.label} has no DA scores for {', '.join(missing)}; it has "
                f"{', '.join(sorted(pairs))}"
            ]
        )
    return [pairs[lp] for lp in sorted(pairs) if not language_pairs or lp in language_pairs]


def _table(
    path: str, data: bytes, required: Sequence[str]
) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """The header's column names and ``(line number, fields)`` of every other non-blank line
    (tab-separated, or whitespace-separated where a line has no tab)."""
    lines = decode_lines(path, data)
    numbered = ((n, line.strip()) for n, line in enumerate(lines, start=1))
    body = ((n, line) for n, line in numbered if line)
    first = next(body, None)
    if first is None:
        raise refuse(path, None, "is empty")
    header = first[1].split()
    missing = [name for name in required if name not in header]
    if missing:
        raise refuse(path, first[0], f"the header lacks column(s) {', '.join(missing)}")
    if len(set(header)) != len(header):
        raise refuse(path, first[0], "the header names a column twice")

    def rows() -> Iterator[tuple[int, list[str]]]:
        width = len(header)
        for number, line in body:
            if "\t" in line:
                fields = line.split("\t")
                if " " in line:
                    fields = [f.strip() for f in fields]
            else:
                fields = line.split()
            if len(fields) != width:
                raise refuse(path, number, f"{width} fields expected, got {len(fields)}")
            yield number, fields

    return header, rows()


def _text(value: str, path: str, line: int, what: str, limit: int) -> str:
    if not value:
        raise refuse(path, line, f"{what} is empty")
    if len(value) > limit:
        raise refuse(path, line, f"{what} is longer than {limit} characters")
    return value


def _sid_order(sid: str) -> tuple[int, int | str]:
    return (0, int(sid)) if sid.isdigit() else (1, sid)


def read_wmt_da(
    files: ReleaseFiles, *, score_kind: str = "z", language_pairs: Sequence[str] = ()
) -> DaRelease:
    if score_kind not in SCORE_KINDS:
        raise DatasetFormatError([f"score kind must be z or raw, got {score_kind!r}"])
    report: dict[str, Any] = {
        "release": "wmt-da",
        "score_kind": score_kind,
        "none_cells": 0,
        "duplicate_rows": 0,
        "duplicate_lines": [],
        "checks": {},
        "repeats": 0,
        "judgments_without_mean": 0,
        "without_judgments": [],
        "ignored_files": [],
    }
    segments: list[ParsedSegment] = []
    judgments: dict[str, JudgmentRows] = {}
    for pair in _pairs(files, language_pairs):
        report["ignored_files"] += pair.ignored
        pair_segments = _read_means(files, pair, score_kind, report)
        if pair.judgments:
            judgments[pair.lp] = _read_judgments(files, pair, pair_segments, report)
        else:
            report["without_judgments"].append(pair.lp)
        segments += pair_segments
    report["duplicate_lines"] = report["duplicate_lines"][:REPORTED_LINES]
    return DaRelease(segments, judgments, report)


def _duplicate(report: dict[str, Any], path: str, number: int) -> None:
    report["duplicate_rows"] += 1
    report["duplicate_lines"].append(f"{path}:{number}")


def _read_means(
    files: ReleaseFiles, pair: _Pair, score_kind: str, report: dict[str, Any]
) -> list[ParsedSegment]:
    path = pair.means
    header, body = _table(path, files.read(path), MEANS_COLUMNS)
    at = {name: header.index(name) for name in MEANS_COLUMNS}
    src_lang, tgt_lang = split_language_pair(pair.lp)
    cells: dict[tuple[str, str], tuple[int, tuple[float | None, float | None, int]]] = {}
    for number, fields in body:
        system = _text(fields[at["SYS"]], path, number, "SYS", MAX_SYSTEM_NAME)
        sid = _text(fields[at["SID"]], path, number, "SID", 100)
        raw, z = (
            None if fields[at[c]] in _MISSING else parse_number(fields[at[c]], path, number, c)
            for c in ("RAW.SCR", "Z.SCR")
        )
        n = parse_number(fields[at["N"]], path, number, "N")
        if n < 0 or not float(n).is_integer():
            raise refuse(
                path, number, f"N must be a whole number of judgments, got {fields[at['N']]}"
            )
        values = (raw, z, int(n))
        seen = cells.get((system, sid))
        if seen is not None:
            if seen[1] != values:
                raise refuse(
                    path,
                    number,
                    f"system {system!r}, segment {sid} again, with other numbers than on line "
                    f"{seen[0]}",
                )
            _duplicate(report, path, number)
            continue
        cells[(system, sid)] = (number, values)
    if not cells:
        raise refuse(path, None, "has no rows under its header")
    by_sid: dict[str, ParsedSegment] = {}
    score_at = 0 if score_kind == "raw" else 1
    for (system, sid), (number, values) in cells.items():
        segment = by_sid.get(sid)
        if segment is None:
            segment = by_sid[sid] = ParsedSegment(
                line_number=number, lp=pair.lp, src_lang=src_lang, tgt_lang=tgt_lang,
                source="", scores={}, segment_key=sid,
                extra={"da_raw": {}, "da_z": {}, "n_judgments": {}},
            )  # fmt: skip
        score = values[score_at]
        report["none_cells"] += score is None
        segment.scores[system] = score
        segment.extra["da_raw"][system] = values[0]
        segment.extra["da_z"][system] = values[1]
        segment.extra["n_judgments"][system] = values[2]
    return [by_sid[sid] for sid in sorted(by_sid, key=_sid_order)]


def _read_judgments(
    files: ReleaseFiles, pair: _Pair, segments: list[ParsedSegment], report: dict[str, Any]
) -> JudgmentRows:
    path = pair.judgments
    header, body = _table(path, files.read(path), JUDGMENT_COLUMNS)
    i_worker, i_system, i_type, i_sid, i_score = (header.index(c) for c in JUDGMENT_COLUMNS)
    langs = [(header.index(c), code) for c, code in zip(
        ("Input.src", "Input.trg"), pair.lp.split("-"), strict=True
    ) if c in header]  # fmt: skip
    row_of = {segment.segment_key: i for i, segment in enumerate(segments)}
    rows = JudgmentRows()
    seen: set[tuple[str, ...]] = set()
    checks: dict[str, int] = report["checks"]
    for number, fields in body:
        for index, code in langs:
            if fields[index] != code:
                raise refuse(path, number, f"a judgment of {fields[index]!r}, not of {pair.lp}")
        key = tuple(fields)
        if key in seen:
            _duplicate(report, path, number)
            continue
        seen.add(key)
        kind = fields[i_type]
        score = parse_number(fields[i_score], path, number)
        if kind not in ("SYSTEM", "REPEAT"):
            checks[kind] = checks.get(kind, 0) + 1
            continue
        worker, system, sid = fields[i_worker], fields[i_system], fields[i_sid]
        if not (
            0 < len(worker) <= 200 and 0 < len(system) <= MAX_SYSTEM_NAME and 0 < len(sid) <= 100
        ):
            _text(worker, path, number, "WorkerId", 200)
            _text(system, path, number, "sys_id", MAX_SYSTEM_NAME)
            _text(sid, path, number, "sid", 100)
        row = row_of.get(sid)
        if row is None or system not in segments[row].scores:
            report["judgments_without_mean"] += 1
            continue
        report["repeats"] += kind == "REPEAT"
        rows.add(row, system, worker, math.nan, score, kind == "REPEAT")
    return rows
