"""How much the app code repeats itself, now against a baseline commit (issue 39).

Counts what the ``duplicates`` tool reports (pairs of places sharing runs of six or more
identical or same-shape lines) over the app code of two commits: the ``.py`` and ``.html``
files git tracks, without tests, bench, docs, scripts, static files and migrations. The
baseline is the commit before issue 39's first change (``07eb483``); apps built after it
(``ranking/``) can be left out of the current count with ``--exclude``, so that both sides
count the same code.

    .venv/bin/python bench/app_repetition.py                   # ~1 min
    .venv/bin/python bench/app_repetition.py --exclude ranking --base 07eb483 --rev HEAD

Needs the ``duplicates`` command on the PATH (the development machines have it; it is not a
Python package). Prints a Markdown table with each count's ratio to the baseline's.
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = re.compile(r"^(tests|bench|docs|scripts|static)/|/static/|/migrations/|node_modules/")
SUMMARY = re.compile(
    r"(\d+) pairs? of places \((\d+) files read\).*?\((\d+) by shape alone, (\d+) of those"
)


def app_files(rev: str, exclude: tuple[str, ...], into: Path) -> int:
    """Write ``rev``'s app code under ``into``; the number of files written."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=ROOT, check=True, capture_output=True
    ).stdout
    written = 0
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            name = member.name
            if not member.isfile() or not name.endswith((".py", ".html")) or SKIPPED.search(name):
                continue
            if any(name.startswith((f"{app}/", f"templates/{app}/")) for app in exclude):
                continue
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            handle = tar.extractfile(member)
            assert handle is not None
            target.write_bytes(handle.read())
            written += 1
    return written


def count(rev: str, exclude: tuple[str, ...]) -> dict[str, int]:
    with tempfile.TemporaryDirectory() as folder:
        app_files(rev, exclude, Path(folder))
        report = subprocess.run(
            ["duplicates", "--repo", folder, "--seconds", "300", "--most", "1"],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
    found = SUMMARY.search(report)
    if found is None:
        raise SystemExit(f"cannot read the duplicates summary for {rev}: {report[:300]!r}")
    pairs, files, shape, boilerplate = map(int, found.groups())
    return {
        "files": files,
        "pairs": pairs,
        "identical": pairs - shape,  # pairs sharing at least one run of identical lines
        "not_boilerplate": pairs - boilerplate,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="07eb483", help="The baseline commit.")
    parser.add_argument("--rev", default="HEAD", help="The commit to measure.")
    parser.add_argument(
        "--exclude", nargs="*", default=["ranking"],
        help="Apps left out of the second count of --rev (built after the baseline).",
    )  # fmt: skip
    args = parser.parse_args()
    if shutil.which("duplicates") is None:
        sys.exit("the duplicates command is not on the PATH")
    rows = [(f"{args.base} (baseline)", count(args.base, ()))]
    rows.append((args.rev, count(args.rev, ())))
    if args.exclude:
        label = f"{args.rev} without {', '.join(args.exclude)}"
        rows.append((label, count(args.rev, tuple(args.exclude))))
    base = rows[0][1]
    print("| code | files | pairs | / baseline | identical-line pairs | not boilerplate |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, row in rows:
        print(
            f"| {label} | {row['files']} | {row['pairs']} | {row['pairs'] / base['pairs']:.2f} "
            f"| {row['identical']} | {row['not_boilerplate']} |"
        )


if __name__ == "__main__":
    main()
