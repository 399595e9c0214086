"""A release as it ships, a folder or an archive (.tar.gz, .tgz, .tar, .zip), read without
unpacking it to disk.

The field ships multi-file releases (mt-metrics-eval's tree, a WMT human-evaluation folder,
Google's ``.tsv.tar.gz``); importers read them through :class:`ReleaseFiles`: the relative
paths it holds and the bytes of the ones the importer asked for. Archives are hostile input:

* a member whose path leaves the archive (absolute, ``..``, a drive letter) or holds a NUL,
  a symbolic or hard link, a device or a FIFO, an encrypted zip member: the archive is refused,
  naming the member, rather than skipped (a release never holds one);
* bombs: the sizes of all members together, the bytes read into memory and the number of members
  are bounded (:class:`Limits`); every read is bounded too, since a zip header may lie.

A folder on disk (the management commands) is walked without following links out of it.
Nothing is extracted; the wanted members' bytes are held in memory, bounded by the limits.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Protocol

__all__ = [
    "ArchiveError",
    "DirectoryFiles",
    "Limits",
    "MemoryFiles",
    "ReleaseFiles",
    "is_archive",
    "open_release",
    "read_archive",
    "read_archive_bytes",
]

GZIP_MAGIC = b"\x1f\x8b"
XZ_MAGIC = b"\xfd7zXZ\x00"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_TAR_MAGIC_AT = 257  # "ustar" in a POSIX tar header
MB = 2**20
Wanted = Callable[[str], bool]


def _size(n: int) -> str:
    return f"{n // MB} MB" if n >= MB else f"{n} bytes"


class ArchiveError(ValueError):
    """The archive or folder is refused; the message names it and, where one is to blame, the
    member."""


@dataclass(frozen=True)
class Limits:
    """What one import may unpack: all members' sizes together (``max_total_bytes``), the bytes
    of the members it reads (``max_read_bytes``) and the number of members."""

    max_total_bytes: int = 16 * 1024 * MB
    max_read_bytes: int = 1024 * MB
    max_members: int = 200_000


class ReleaseFiles(Protocol):
    """Relative POSIX paths of a release's files and the bytes of those that were read."""

    label: str

    def names(self) -> list[str]: ...

    def read(self, name: str) -> bytes: ...


@dataclass
class MemoryFiles:
    """An archive's member paths (all of them) and the bytes of the wanted ones."""

    label: str
    all_names: list[str] = field(default_factory=list)
    contents: dict[str, bytes] = field(default_factory=dict)

    def names(self) -> list[str]:
        return list(self.all_names)

    def read(self, name: str) -> bytes:
        try:
            return self.contents[name]
        except KeyError:
            raise ArchiveError(f"{self.label}: {name} was not read from the archive") from None


def is_archive(head: bytes) -> bool:
    """Whether the first bytes of a file are a gzip stream, a zip or a plain tar."""
    bzip2 = head[:3] == b"BZh" and head[4:10] == b"1AY&SY"
    return (
        head.startswith((GZIP_MAGIC, XZ_MAGIC))
        or bzip2
        or head.startswith(ZIP_MAGICS)
        or head[_TAR_MAGIC_AT : _TAR_MAGIC_AT + 5] == b"ustar"
    )


def _clean_path(label: str, name: str) -> str | None:
    """The member's relative POSIX path, None for a folder entry; refuses a path that leaves
    the archive."""
    if "\x00" in name:
        raise ArchiveError(f"{label}: a member's name holds a NUL character ({name!r})")
    unified = name.replace("\\", "/")
    parts = [p for p in unified.split("/") if p not in ("", ".")]
    if unified.startswith("/") or (parts and len(parts[0]) == 2 and parts[0][1] == ":"):
        raise ArchiveError(f"{label}: member {name!r} has an absolute path; refused")
    if ".." in parts:
        raise ArchiveError(f"{label}: member {name!r} points outside the archive (..); refused")
    return "/".join(parts) or None


class _Budget:
    """What one archive or folder has unpacked so far, refused past its :class:`Limits`."""

    def __init__(self, label: str, limits: Limits) -> None:
        self.label, self.limits = label, limits
        self.total = self.read = self.members = 0

    def member(self, name: str, size: int) -> None:
        self.members += 1
        self.total += max(size, 0)
        if self.members > self.limits.max_members:
            raise ArchiveError(
                f"{self.label}: more than {self.limits.max_members} members; refused"
            )
        if self.total > self.limits.max_total_bytes:
            raise ArchiveError(
                f"{self.label}: unpacks to more than {_size(self.limits.max_total_bytes)} "
                f"(at member {name}); refused"
            )

    def take(self, where: str, stream: IO[bytes]) -> bytes:
        """The stream's bytes, counted against the read limit (``where`` names the file)."""
        room = self.limits.max_read_bytes - self.read
        data = stream.read(room + 1)
        if len(data) > room:
            raise ArchiveError(
                f"{self.label}: the files to read hold more than "
                f"{_size(self.limits.max_read_bytes)} (at {where}); refused"
            )
        self.read += len(data)
        return data


def _read_tar(fileobj: IO[bytes], files: MemoryFiles, wanted: Wanted, budget: _Budget) -> None:
    try:
        with tarfile.open(fileobj=fileobj, mode="r:*") as archive:
            _walk_tar(archive, files, wanted, budget)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ArchiveError(f"{files.label}: not a readable tar or zip archive ({exc})") from None


def _walk_tar(
    archive: tarfile.TarFile, files: MemoryFiles, wanted: Wanted, budget: _Budget
) -> None:
    for member in archive:
        path = _clean_path(files.label, member.name)
        if member.issym() or member.islnk():
            raise ArchiveError(
                f"{files.label}: member {member.name!r} is a link; links are refused"
            )
        if member.isdir() or path is None:
            continue
        if not member.isfile():
            raise ArchiveError(
                f"{files.label}: member {member.name!r} is not a regular file; refused"
            )
        budget.member(path, member.size)
        files.all_names.append(path)
        if wanted(path):
            stream = archive.extractfile(member)
            if stream is None:  # pragma: no cover - isfile() members always have data
                raise ArchiveError(f"{files.label}: member {path} cannot be read")
            files.contents[path] = budget.take(f"member {path}", stream)


def _read_zip(fileobj: IO[bytes], files: MemoryFiles, wanted: Wanted, budget: _Budget) -> None:
    try:
        archive = zipfile.ZipFile(fileobj)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ArchiveError(f"{files.label}: not a readable zip archive ({exc})") from None
    with archive:
        for info in archive.infolist():
            path = _clean_path(files.label, info.filename)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise ArchiveError(
                    f"{files.label}: member {info.filename!r} is a link; links are refused"
                )
            if info.is_dir() or path is None:
                continue
            if info.flag_bits & 0x1:
                raise ArchiveError(f"{files.label}: member {info.filename!r} is encrypted")
            budget.member(path, info.file_size)
            files.all_names.append(path)
            if wanted(path):
                try:
                    with archive.open(info) as stream:
                        files.contents[path] = budget.take(f"member {path}", stream)
                except (zipfile.BadZipFile, OSError, EOFError) as exc:
                    raise ArchiveError(f"{files.label}: member {path} is damaged ({exc})") from None


def read_archive(
    fileobj: IO[bytes],
    *,
    label: str,
    wanted: Callable[[str], bool],
    limits: Limits = Limits(),
) -> MemoryFiles:
    """Every member path of a tar (gzip, bzip2, xz or plain) or zip archive, and the bytes of the
    members ``wanted(path)`` accepts; ``fileobj`` must be seekable. One pass over a tar."""
    files = MemoryFiles(label)
    budget = _Budget(label, limits)
    head = fileobj.read(4)
    fileobj.seek(0)
    if head.startswith(ZIP_MAGICS):
        _read_zip(fileobj, files, wanted, budget)
    else:
        _read_tar(fileobj, files, wanted, budget)
    twice = [name for name, n in Counter(files.all_names).items() if n > 1]
    if twice:
        # Which copy would count is the unpacking tool's choice: refuse rather than guess.
        raise ArchiveError(f"{label}: member {twice[0]} appears twice; refused")
    return files


@dataclass
class DirectoryFiles:
    """A folder on disk; links are followed only when they stay inside it."""

    root: Path
    limits: Limits = Limits()
    label: str = ""

    def __post_init__(self) -> None:
        self.label = self.label or str(self.root)
        self._budget = _Budget(self.label, self.limits)
        self._resolved = self.root.resolve()
        self._names: list[str] | None = None

    def names(self) -> list[str]:
        """The folder's files, walked once (readers ask again for each language pair)."""
        if self._names is None:
            self._names = self._walk()
        return list(self._names)

    def _walk(self) -> list[str]:
        found = []
        for folder, dirs, file_names in os.walk(self.root):
            dirs.sort()
            for file_name in sorted(file_names):
                path = Path(folder, file_name)
                found.append(PurePosixPath(path.relative_to(self.root).as_posix()).as_posix())
                if len(found) > self.limits.max_members:
                    raise ArchiveError(
                        f"{self.label}: more than {self.limits.max_members} files; refused"
                    )
        return found

    def read(self, name: str) -> bytes:
        path = self.root / name
        resolved = path.resolve()
        if not resolved.is_relative_to(self._resolved):
            raise ArchiveError(f"{self.label}: {name} links outside the folder; refused")
        if not resolved.is_file():
            raise ArchiveError(f"{self.label}: {name} is not a regular file")
        with resolved.open("rb") as stream:
            return self._budget.take(name, stream)


def open_release(
    path: Path, *, wanted: Callable[[str], bool], limits: Limits = Limits()
) -> ReleaseFiles:
    """A folder or an archive file on disk as :class:`ReleaseFiles`."""
    if path.is_dir():
        return DirectoryFiles(path, limits)
    with path.open("rb") as stream:
        return read_archive(stream, label=path.name, wanted=wanted, limits=limits)


def read_archive_bytes(
    data: bytes, *, label: str, wanted: Callable[[str], bool], limits: Limits = Limits()
) -> MemoryFiles:
    """:func:`read_archive` of an archive held in memory (an upload)."""
    return read_archive(io.BytesIO(data), label=label, wanted=wanted, limits=limits)
