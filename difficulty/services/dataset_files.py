"""Which reader a difficulty dataset's file, folder or archive goes to (the command, the page,
the API and background imports all call here).

* :func:`import_difficulty_file`: an upload, an open file or its lines: WMT-style JSONL, a
  Google MQM TSV, a WMT DA means file, or an archive (``.tar.gz``, ``.tgz``, ``.zip``) of any
  release;
* :func:`import_difficulty_path`: the same for a path on disk, a folder included (the command);
* :func:`import_release_files`: a release already opened as :class:`ReleaseFiles`.

With ``auto`` the format is recognised from a file's first line, from the paths an archive or
folder holds, else from the file name. A file that looks like another format than the one chosen
is refused in one message naming the right choice, rather than line by line.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePath
from typing import Any

from django.conf import settings

from annotation.formats import google_mqm
from difficulty.models import DifficultyDataset
from difficulty.releases import mtme, wmt_da
from difficulty.services.datasets import (
    DifficultyDatasetError,
    check_dataset_name,
    import_difficulty_dataset,
    import_mqm_tsv_dataset,
    import_mtme_dataset,
    import_wmt_da_dataset,
)
from formats import strict_json
from formats.archives import (
    ArchiveError,
    DirectoryFiles,
    Limits,
    MemoryFiles,
    ReleaseFiles,
    is_archive,
    open_release,
    read_archive_bytes,
)

__all__ = [
    "DATASET_FORMATS",
    "DA_SCORE_KINDS",
    "choose_dataset_format",
    "import_difficulty_file",
    "import_difficulty_path",
    "import_release_files",
]

DATASET_FORMATS = {
    "auto": "Recognise it (from line 1, an archive's or folder's files, else the file name)",
    "wmt-jsonl": "WMT-style JSONL",
    "google-mqm": "Google MQM TSV",
    "mt-metrics-eval": "mt-metrics-eval test set",
    "wmt-da": "WMT crowd-DA release",
}
"""The formats a difficulty dataset imports from (the command, the page and the API). A Google
MQM TSV may come in Google's ``.tar.gz``; an mt-metrics-eval test set is a folder or an archive;
a WMT DA release is its means file alone, or with its judgments in a folder or an archive."""
DA_SCORE_KINDS = {"z": "z (standardised per worker, as WMT ranks)", "raw": "raw (0–100)"}
_SUFFIXES = {".jsonl": "wmt-jsonl", ".json": "wmt-jsonl", ".tsv": "google-mqm"}
# A single-file format's file inside an archive or folder, by name.
_SINGLE_FILES = {
    "auto": (".tsv", ".jsonl", ".json"),
    "google-mqm": (".tsv",),
    "wmt-jsonl": (".jsonl", ".json"),
}
_MQM_HEADER = " ".join(google_mqm.COLUMNS)
_DA_HEADERS = f"{' '.join(wmt_da.MEANS_COLUMNS)}, or HITId WorkerId ... type sid score"


def _limits() -> Limits:
    return Limits(
        max_total_bytes=settings.RELEASE_UNPACKED_MAX_BYTES,
        max_read_bytes=settings.RELEASE_READ_MAX_BYTES,
        max_members=settings.RELEASE_MAX_MEMBERS,
    )


def _peek(source: Iterable[bytes | str]) -> tuple[bytes, Iterator[bytes | str]]:
    """The first non-blank line of ``source`` and all of its lines (that one included)."""
    lines = iter(source)
    read: list[bytes | str] = []
    head = b""
    for line in lines:
        read.append(line)
        head = line.encode() if isinstance(line, str) else bytes(line)
        if head.strip():
            break
    return head.removeprefix(b"\xef\xbb\xbf"), itertools.chain(read, lines)


def _joined(lines: Iterable[bytes | str]) -> bytes:
    return b"".join(line.encode() if isinstance(line, str) else line for line in lines)


def _looks_like(head: bytes) -> str | None:
    if google_mqm.looks_like(head):
        return "google-mqm"
    if wmt_da.sniff(head):
        return "wmt-da"
    try:
        return "wmt-jsonl" if isinstance(strict_json.loads(head), dict) else None
    except strict_json.JSONInputError:
        return None


def _check_format(file_format: str) -> None:
    if file_format not in DATASET_FORMATS:
        choices = ", ".join(DATASET_FORMATS)
        raise DifficultyDatasetError(f"unknown format {file_format!r} (choose one of {choices})")


def choose_dataset_format(head: bytes, file_format: str, file_name: str = "") -> str:
    """The format to read a single file whose first non-blank line is ``head`` with:
    ``file_format``, or for ``auto`` what line 1 (else the file name) looks like."""
    _check_format(file_format)
    looks_like = _looks_like(head)
    if file_format == "auto":
        chosen = looks_like or _SUFFIXES.get(PurePath(file_name).suffix.lower())
        if chosen is None:
            raise DifficultyDatasetError(
                "line 1 is neither a JSON object (WMT-style JSONL), the header of a Google "
                f"MQM TSV ({_MQM_HEADER}) nor that of a WMT DA file ({_DA_HEADERS}), and the "
                "file is no archive: this file is in none of the formats"
            )
        return chosen
    if file_format == "mt-metrics-eval":
        raise DifficultyDatasetError(
            "an mt-metrics-eval test set is a folder (sources/, system-outputs/, human-scores/"
            "...): import it as a .tar.gz or .zip archive, or point the command at the folder"
        )
    if file_format == "wmt-jsonl" and looks_like != "wmt-jsonl":
        if looks_like is not None:
            raise DifficultyDatasetError(
                f"line 1 is not valid JSON: this looks like a {DATASET_FORMATS[looks_like]}; "
                f"choose the format {DATASET_FORMATS[looks_like]} ({looks_like})"
            )
        if b"\t" in head:
            raise DifficultyDatasetError(
                "line 1 is not valid JSON: this looks like a TSV, but not a Google MQM TSV "
                f"(whose header starts with {_MQM_HEADER})"
            )
    wrong = looks_like is not None and looks_like != file_format
    if file_format in ("google-mqm", "wmt-da") and looks_like is not None and wrong:
        raise DifficultyDatasetError(
            f"line 1 is not a {DATASET_FORMATS[file_format]} header: this looks like "
            f"{DATASET_FORMATS[looks_like]}; choose the format {DATASET_FORMATS[looks_like]} "
            f"({looks_like})"
        )
    if file_format == "wmt-da" and looks_like is None:
        raise DifficultyDatasetError(f"line 1 is not the header of a WMT DA file ({_DA_HEADERS})")
    return file_format


def _wanted(file_format: str, test_set: str) -> Callable[[str], bool]:
    """The archive members a format may read (an mt-metrics-eval release's metric scores, most
    of its bytes, are never read)."""

    def wanted(path: str) -> bool:
        if file_format in ("auto", "mt-metrics-eval") and mtme.wanted(path, test_set):
            return True
        if file_format in ("auto", "wmt-da") and wmt_da.wanted(path):
            return True
        return path.endswith(_SINGLE_FILES.get(file_format, ()))

    return wanted


def import_difficulty_file(
    source: Iterable[bytes | str],
    *,
    name: str,
    file_format: str = "auto",
    language_pair: str = "",
    human_score: str = "",
    test_set: str = "",
    score_kind: str = "z",
    source_file_name: str = "",
    **common: Any,
) -> DifficultyDataset:
    """Import a file (an upload, an open file or its lines) in ``file_format`` (one of
    :data:`DATASET_FORMATS`). ``language_pair`` names a Google MQM TSV's languages (its rows
    name none) or a WMT DA means file's when its name does not, and picks one pair of a
    release; ``human_score`` and ``test_set`` choose within an mt-metrics-eval release,
    ``score_kind`` (z or raw) a WMT DA release's scores. ``common``: ``description``,
    ``reference_rule``, ``perfect_score``, ``created_by``, ``on_written``. Raises
    :class:`DifficultyDatasetError` or :class:`DatasetFormatError`; nothing is written then."""
    check_dataset_name(name)
    _check_format(file_format)
    head, lines = _peek(source)
    choices = {"human_score": human_score, "test_set": test_set, "score_kind": score_kind}
    options: dict[str, Any] = {
        "name": name,
        "language_pair": language_pair,
        "source_file_name": source_file_name,
    }
    if is_archive(head):
        try:
            files = read_archive_bytes(
                _joined(lines),
                label=source_file_name or "the archive",
                wanted=_wanted(file_format, test_set),
                limits=_limits(),
            )
        except ArchiveError as exc:
            raise DifficultyDatasetError(_hint(str(exc), file_format, test_set)) from None
        return import_release_files(files, file_format=file_format, **choices, **options, **common)
    chosen = choose_dataset_format(head, file_format, source_file_name)
    if chosen == "wmt-da":
        files = _da_file(_joined(lines), head, source_file_name, language_pair)
        return import_release_files(files, file_format="wmt-da", **choices, **options, **common)
    if chosen == "google-mqm":
        return import_mqm_tsv_dataset(_joined(lines), **options, **common)
    return import_difficulty_dataset(lines, name=name, source_file_name=source_file_name, **common)


def _hint(message: str, file_format: str, test_set: str) -> str:
    if "MB" in message and not test_set and file_format in ("auto", "mt-metrics-eval"):
        return message + " (for a whole mt-metrics-eval release, name the test set to read)"
    return message


def _da_file(data: bytes, head: bytes, file_name: str, language_pair: str) -> MemoryFiles:
    """A lone WMT DA means file as a release of one file, named as the release names it."""
    if wmt_da.sniff(head) == "judgments":
        raise DifficultyDatasetError(
            "this is a WMT DA judgments file; its per-segment means (ad-seg-scores-XX-YY.csv) "
            "are needed too: import both in one .zip or .tar.gz, or point the command at "
            "their folder"
        )
    name = PurePath(file_name).name
    if language_pair:
        name = f"ad-seg-scores-{language_pair}.csv"
    elif not wmt_da.wanted(name):
        raise DifficultyDatasetError(
            f"the file name {file_name!r} names no language pair (as ad-seg-scores-lv-en.csv "
            "does): give the language pair, e.g. lv-en"
        )
    return MemoryFiles(file_name or name, [name], {name: data})


def import_difficulty_path(path: Path, **options: Any) -> DifficultyDataset:
    """:func:`import_difficulty_file` for a path on disk: a file, an archive or a folder."""
    file_format = options.get("file_format", "auto")
    if path.is_dir():
        files: ReleaseFiles = DirectoryFiles(path, _limits(), label=path.name)
    else:
        with path.open("rb") as stream:
            head = stream.read(512)
        if not is_archive(head):
            with path.open("rb") as stream:
                return import_difficulty_file(stream, source_file_name=path.name, **options)
        check_dataset_name(options["name"])
        test_set = options.get("test_set", "")
        try:
            files = open_release(path, wanted=_wanted(file_format, test_set), limits=_limits())
        except ArchiveError as exc:
            raise DifficultyDatasetError(_hint(str(exc), file_format, test_set)) from None
    return import_release_files(files, source_file_name=path.name, **options)


def _release_format(files: ReleaseFiles, file_format: str) -> tuple[str, str]:
    """The format of a folder or archive, and for a single-file format the file to read."""
    names = files.names()
    if file_format in ("auto", "mt-metrics-eval") and mtme.looks_like(names):
        return "mt-metrics-eval", ""
    if file_format in ("auto", "wmt-da") and wmt_da.looks_like(names):
        return "wmt-da", ""
    candidates = [n for n in names if n.endswith(_SINGLE_FILES.get(file_format, ()))]
    if len(candidates) == 1:
        found = candidates[0]
        return ("wmt-jsonl" if found.endswith((".jsonl", ".json")) else "google-mqm"), found
    wanted = {
        "mt-metrics-eval": "an mt-metrics-eval test set (sources/, human-scores/*.seg.score)",
        "wmt-da": "a WMT DA means file (ad-seg-scores-XX-YY.csv)",
        "google-mqm": "exactly one Google MQM TSV",
        "wmt-jsonl": "exactly one JSONL file",
    }
    looked_for = [wanted[file_format]] if file_format in wanted else list(wanted.values())
    held = f"; it holds {', '.join(candidates[:5])}" if len(candidates) > 1 else ""
    raise DifficultyDatasetError(f"{files.label} holds no {' or '.join(looked_for)}{held}")


def import_release_files(
    files: ReleaseFiles,
    *,
    file_format: str = "auto",
    language_pair: str = "",
    human_score: str = "",
    test_set: str = "",
    score_kind: str = "z",
    **common: Any,
) -> DifficultyDataset:
    """Import a release opened from a folder or an archive (see :func:`import_difficulty_file`
    for the options)."""
    _check_format(file_format)
    check_dataset_name(common["name"])
    pairs = (language_pair,) if language_pair else ()
    try:
        chosen, member = _release_format(files, file_format)
        if chosen == "mt-metrics-eval":
            return import_mtme_dataset(
                files, human_score=human_score, test_set=test_set, language_pairs=pairs, **common
            )
        if chosen == "wmt-da":
            return import_wmt_da_dataset(
                files, score_kind=score_kind, language_pairs=pairs, **common
            )
        data = files.read(member)
        if chosen == "google-mqm":
            return import_mqm_tsv_dataset(
                data, language_pair=language_pair, member_name=member, **common
            )
        return import_difficulty_dataset(io.BytesIO(data), **common)
    except ArchiveError as exc:
        raise DifficultyDatasetError(str(exc)) from None
