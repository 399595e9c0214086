"""Files in and out of management commands, with every expected failure as a one-line error.

Commands are thin adapters (STYLE.md 13): what goes wrong with the files they are given (missing,
unreadable, not UTF-8, not JSON, an output folder that does not exist) is the user's input, so it
becomes a ``CommandError`` whose message fits on one line, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from django.core.management import CommandError
from django.core.management.base import CommandParser, OutputWrapper

from formats.jsonl import JsonDocumentError, read_json_document
from rounds import JobConfigError

if TYPE_CHECKING:
    from rounds.models import CountedJob

Job = TypeVar("Job")


def _cannot(action: str, path: str | Path, exc: OSError) -> CommandError:
    return CommandError(f"cannot {action} {path}: {exc.strerror or exc}")


@contextmanager
def reading(path: str | Path) -> Iterator[None]:
    """An ``OSError`` in the block (a missing or unreadable ``path``) is one line:
    ``cannot read {path}: reason``."""
    try:
        yield
    except OSError as exc:
        raise _cannot("read", path, exc) from None


def read_bytes(path: str | Path) -> bytes:
    """The bytes of the file at ``path``."""
    with reading(path):
        return Path(path).read_bytes()


def open_bytes(path: str | Path) -> IO[bytes]:
    """The file at ``path``, open for reading bytes (the caller closes it)."""
    with reading(path):
        return Path(path).open("rb")


def read_json_file(path: str | Path) -> Any:
    """The JSON document in ``path`` (``-``: standard input), read as formats.jsonl reads."""
    with reading(path):
        data = sys.stdin.buffer.read() if str(path) == "-" else Path(path).read_bytes()
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
        raise _cannot("write", target, exc) from None
    try:
        with handle:
            yield handle
        partial.replace(target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise _cannot("write", target, exc) from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def write_out(stdout: OutputWrapper, content: str, path: str | Path | None) -> bool:
    """``content`` into the file at ``path`` (through :func:`output_file`), or onto ``stdout``
    as it is when no path is given; True when it went into a file."""
    if not path:
        stdout.write(content, ending="")
        return False
    with output_file(path) as handle:
        handle.write(content)
    return True


def problems_error(summary: str, problems: Sequence[str]) -> CommandError:
    """One line for one problem; a list under the summary when there are several to fix."""
    if len(problems) == 1:
        return CommandError(f"{summary}: {problems[0].strip()}")
    listed = "\n".join(f"  - {problem.strip()}" for problem in problems)
    return CommandError(f"{summary}: {len(problems)} problems:\n{listed}")


def read_json_object(path: str | Path) -> dict:
    """A job's configuration file: one JSON object."""
    config = read_json_file(path)
    if not isinstance(config, dict):
        raise CommandError(f"{path} must hold a JSON object")
    return config


# --- The foreground twin of a job (STYLE.md 13): start it, or run it here to the end ----------


def add_job_options(parser: CommandParser, *, printed: str = "the summary") -> None:
    """``--foreground`` (run every round in this process) and ``--json`` (print ``printed`` as
    JSON), the options every job-starting command takes."""
    parser.add_argument("--foreground", action="store_true", help="Run it here, to the end.")
    parser.add_argument("--json", action="store_true", help=f"Print {printed} as JSON.")


def add_run_config_arguments(parser: CommandParser) -> None:
    """A run's configuration file, the job options and ``--name``: what every command that
    starts a run from a JSON config takes (read back by :func:`read_run_config`)."""
    parser.add_argument("config", type=Path, help="Run configuration (JSON object).")
    add_job_options(parser)
    parser.add_argument("--name", help="Override the run's name.")


def read_run_config(options: dict[str, Any]) -> dict:
    """The configuration named by :func:`add_run_config_arguments`, ``--name`` applied."""
    config = read_json_object(options["config"])
    if options["name"]:
        config["name"] = options["name"]
    return config


def start_job(start: Callable[..., Job], config: Any, *, foreground: bool, what: str) -> Job:
    """``start(config)``, queued for the workers unless the command runs it in the foreground;
    a refused configuration is one line: ``invalid {what}: field: message; ...``."""
    try:
        return start(config, enqueue=not foreground)
    except JobConfigError as exc:
        raise CommandError(f"invalid {what}: {exc}") from None


def queued_note(job: str, page: str) -> str:
    """The line a command prints for ``job`` (e.g. "transfer 3") left to the workers."""
    return f"{job} queued for the workers; follow it at {page}"


def outcome_line(job: CountedJob, name: str, counted: str, *details: str) -> str:
    """The line a command prints for a counted job it ran to the end, named ``name`` (e.g.
    "transfer 3"): ``{name} {status}: {done}/{total} {counted}, {details, }cost 0.1234``, then
    its error in brackets if it has one."""
    counts = [f"{job.items_done}/{job.items_total} {counted}", *details, f"cost {job.cost:.4f}"]
    return f"{name} {job.status}: {', '.join(counts)}" + (f" ({job.error})" if job.error else "")


def run_to_end(
    run_in_foreground: Callable[[int], Job], job: Any, state_error: type[Exception]
) -> Job:
    """Every round of ``job`` in this process; a state that refuses it is one line."""
    try:
        return run_in_foreground(job.pk)
    except state_error as exc:
        raise CommandError(str(exc)) from None


def check_succeeded(job: Any, name: str) -> None:
    """A job run here that did not succeed is one line: ``{name} {status}: {error}`` (``name``,
    e.g. "mining job 3")."""
    if job.status not in job.SUCCEEDED:
        raise CommandError(f"{name} {job.status}: {job.error}")
