"""Files in and out of management commands, with every expected failure as a one-line error.

Commands are thin adapters (STYLE.md 13): what goes wrong with the files they are given (missing,
unreadable, not UTF-8, not JSON, an output folder that does not exist) is the user's input, so it
becomes a ``CommandError`` whose message fits on one line, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from django.core.management import CommandError

from formats.jsonl import JsonDocumentError, read_json_document


def read_json_file(path: str | Path) -> Any:
    """The JSON document in ``path`` (``-``: standard input), read as formats.jsonl reads."""
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return read_json_document(data)
    except JsonDocumentError as exc:
        raise CommandError(f"{path}: {exc}") from None


@contextmanager
def output_file(path: str | Path) -> Iterator[IO[str]]:
    """Write ``path`` through a ``.partial`` twin renamed at the end, so a failed or interrupted
    command never leaves a truncated file under the requested name."""
    target = Path(path)
    partial = target.with_name(target.name + ".partial")
    try:
        handle = partial.open("w", encoding="utf-8", newline="")
    except OSError as exc:
        raise CommandError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        with handle:
            yield handle
        partial.replace(target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise CommandError(f"cannot write {target}: {exc.strerror or exc}") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def problems_error(summary: str, problems: Sequence[str]) -> CommandError:
    """One line for one problem; a list under the summary when there are several to fix."""
    if len(problems) == 1:
        return CommandError(f"{summary}: {problems[0].strip()}")
    listed = "\n".join(f"  - {problem.strip()}" for problem in problems)
    return CommandError(f"{summary}: {len(problems)} problems:\n{listed}")
