"""What an item source is: where a challenge set's candidate items come from.

A source is one module with an :class:`ItemSource` subclass, registered with one line in
``challenge_sets/sources/__init__.py``. It declares the few fields its form asks for (the
curation page builds the form from them, the API takes the same names) and turns those
parameters into :class:`Candidate` items, each with its frozen provenance snapshot. MT-breaker
runs and lexical-selection studies plug in the same way: read the producer's public selectors,
return candidates.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar


class SourceError(ValueError):
    """Parameters or input a source cannot use; ``errors`` lists every problem found."""

    def __init__(self, errors: list[str] | str):
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        super().__init__("; ".join(self.errors))


@dataclass(frozen=True)
class Field:
    name: str
    label: str
    kind: str = "text"  # choice, int, float, text, file
    required: bool = True
    default: Any = None
    help: str = ""


@dataclass(frozen=True)
class Candidate:
    """One item a source proposes for a set, before near-duplicate checks and saving."""

    source: str
    src_lang: str
    tgt_lang: str
    origin: str
    origin_ref: str
    translations: dict[str, str] = field(default_factory=dict)
    automatic_difficulty: float | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    question: str = ""
    choices: tuple[str, ...] = ()
    attested: str = ""


class ItemSource(ABC):
    name: ClassVar[str]
    label: ClassVar[str]
    fields: ClassVar[tuple[Field, ...]] = ()

    def choices(self, field_name: str) -> list[tuple[str, str]]:
        """Options of a ``choice`` field (e.g. the finished runs), value first."""
        return []

    @abstractmethod
    def candidates(self, params: dict[str, Any]) -> list[Candidate]:
        """The candidates for ``params`` (already typed per :attr:`fields`); raise
        :class:`SourceError` with every problem, having read but written nothing."""


def int_param(params: dict[str, Any], name: str, *, low: int = 1, high: int = 100_000) -> int:
    try:
        value = int(str(params.get(name)))
    except (TypeError, ValueError):
        raise SourceError(f"{name} must be a whole number") from None
    if not low <= value <= high:
        raise SourceError(f"{name} must be {low} to {high}")
    return value
