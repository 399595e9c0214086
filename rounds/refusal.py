"""A job's configuration refused, field by field: what every job start raises on bad input."""

from __future__ import annotations

__all__ = ["JobConfigError"]


class JobConfigError(ValueError):
    """A configuration a job cannot start from; ``errors`` maps each field to what is wrong
    (pages show them on the fields, the API answers them in a 400, nothing is written)."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in errors.items()))
        self.errors = errors
