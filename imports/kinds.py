"""The registry of import kinds: how each app imports its files, known to this app by name.

An app registers one :class:`ImportKind` per kind of file in ``AppConfig.ready``. Its ``run``
is the app's own all-or-nothing import service, which must call ``on_written(result,
summary="")`` inside the transaction that writes the result (``summary``: what was written, in
words). The job is marked done in that same transaction, so a worker killed before the commit
leaves neither the result nor a finished job behind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ImportKind", "ImportRefused", "get", "register"]


class ImportRefused(Exception):
    """The file or the options are refused; ``errors`` are 'line N: reason' strings."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors[:3]))
        self.errors = errors


OnWritten = Callable[..., None]


@dataclass(frozen=True)
class ImportKind:
    """``run(lines, options, created_by, on_written)`` imports an uploaded file's lines and
    returns the saved result (a model instance); it raises :class:`ImportRefused` for a bad file.
    ``check(options)`` refuses options before the file is stored (a taken name, say), so the
    uploader hears at once. ``result_url(result_id)`` is the result's page."""

    name: str
    label: str
    run: Callable[[Iterable[bytes], Mapping[str, Any], Any, OnWritten], Any]
    result_url: Callable[[int], str]
    check: Callable[[Mapping[str, Any]], None] | None = None


_KINDS: dict[str, ImportKind] = {}


def register(kind: ImportKind) -> None:
    """Called from an app's ``AppConfig.ready``; registering a name again replaces it."""
    _KINDS[kind.name] = kind


def get(name: str) -> ImportKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise LookupError(f"no import kind named {name!r} is registered") from None
