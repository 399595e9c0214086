"""Releases read from an archive or a folder without unpacking: the wanted members' bytes, and a
clear refusal naming the member for paths that leave the archive, links, devices and bombs."""

from __future__ import annotations

import io
import os
import re
import tarfile
import zipfile
from pathlib import Path

import pytest

from formats.archives import (
    ArchiveError,
    DirectoryFiles,
    Limits,
    is_archive,
    open_release,
    read_archive_bytes,
)


def tar_gz(members: dict[str, bytes], extra=None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for info in extra or []:
            archive.addfile(info)
    return buffer.getvalue()


def zipped(members: dict[str, bytes], links: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16) | 0  # a symbolic link, as Info-ZIP stores it
            archive.writestr(info, "../../etc/passwd")
    return buffer.getvalue()


def wants_txt(path: str) -> bool:
    return path.endswith(".txt")


@pytest.mark.parametrize("pack", [tar_gz, zipped])
def test_the_wanted_members_are_read_and_every_path_listed(pack):
    data = pack({"set/sources/en-de.txt": b"Hello\n", "set/metric-scores/x.score": b"1\n"})

    files = read_archive_bytes(data, label="set.tgz", wanted=wants_txt)

    assert is_archive(data[:512])
    assert files.names() == ["set/sources/en-de.txt", "set/metric-scores/x.score"]
    assert files.read("set/sources/en-de.txt") == b"Hello\n"
    with pytest.raises(ArchiveError, match=re.escape("set/metric-scores/x.score was not read")):
        files.read("set/metric-scores/x.score")


def link(name: str, kind: bytes, target: str = "/etc/passwd") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (tar_gz({"../evil.txt": b"x"}), "member '../evil.txt' points outside the archive"),
        (tar_gz({"a/../../evil.txt": b"x"}), "points outside the archive"),
        (tar_gz({"/etc/evil.txt": b"x"}), "member '/etc/evil.txt' has an absolute path"),
        (zipped({"C:/evil.txt": b"x"}), "member 'C:/evil.txt' has an absolute path"),
        (zipped({"..\\evil.txt": b"x"}), "points outside the archive"),
        (tar_gz({}, [link("a/sources.txt", tarfile.SYMTYPE)]), "'a/sources.txt' is a link"),
        (tar_gz({}, [link("a/sources.txt", tarfile.LNKTYPE, "b")]), "is a link"),
        (tar_gz({}, [link("a/dev", tarfile.CHRTYPE)]), "'a/dev' is not a regular file"),
        (tar_gz({}, [link("a/fifo", tarfile.FIFOTYPE)]), "is not a regular file"),
        (zipped({}, links=("a/sources.txt",)), "'a/sources.txt' is a link"),
        (b"\x1f\x8b" + b"not gzip at all" * 10, "not a readable tar or zip archive"),
    ],
    # Named by position: a gzip header holds the time it was written, so bytes in the test ids
    # would differ between the xdist processes that collect them.
    ids=lambda value: value if isinstance(value, str) else "archive",
)
def test_hostile_archives_are_refused_naming_the_member(data, message):
    with pytest.raises(ArchiveError, match=message):
        read_archive_bytes(data, label="release.tgz", wanted=wants_txt)


def test_a_member_twice_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, pytest.warns(UserWarning):
        archive.writestr("a.txt", "1")
        archive.writestr("a.txt", "2")

    with pytest.raises(ArchiveError, match=re.escape("member a.txt appears twice")):
        read_archive_bytes(buffer.getvalue(), label="r.zip", wanted=wants_txt)


@pytest.mark.parametrize("pack", [tar_gz, zipped])
def test_bombs_are_refused_before_they_are_unpacked(pack):
    # 64 KiB of zeros compress to a few hundred bytes: a small bomb against small limits.
    data = pack({"a/big.bin": bytes(64 * 1024), "a/x.txt": b"x" * 10})

    bomb = re.escape("r: unpacks to more than 1000 bytes (at member a/big.bin); refused")
    with pytest.raises(ArchiveError, match=bomb):
        read_archive_bytes(data, label="r", wanted=wants_txt, limits=Limits(max_total_bytes=1000))
    with pytest.raises(ArchiveError, match=re.escape("r: more than 1 members; refused")):
        read_archive_bytes(data, label="r", wanted=wants_txt, limits=Limits(max_members=1))
    read_too_much = re.escape("the files to read hold more than 5 bytes (at member a/x.txt)")
    with pytest.raises(ArchiveError, match=read_too_much):
        read_archive_bytes(data, label="r", wanted=wants_txt, limits=Limits(max_read_bytes=5))


def test_a_folder_is_read_without_following_links_out_of_it(tmp_path: Path):
    release = tmp_path / "release"
    (release / "sources").mkdir(parents=True)
    (release / "sources" / "en-de.txt").write_bytes(b"Hello\n")
    (tmp_path / "secret.txt").write_bytes(b"secret\n")
    os.symlink(tmp_path / "secret.txt", release / "sources" / "de-en.txt")

    files = open_release(release, wanted=wants_txt)

    assert isinstance(files, DirectoryFiles)
    assert files.names() == ["sources/de-en.txt", "sources/en-de.txt"]
    assert files.read("sources/en-de.txt") == b"Hello\n"
    with pytest.raises(ArchiveError, match=re.escape("sources/de-en.txt links outside the folder")):
        files.read("sources/de-en.txt")
