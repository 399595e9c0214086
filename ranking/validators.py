"""Checks of the ranking jobs' values, shared by every ranking model and service.

A module of their own (no models): ``ranking.subsets.models`` names ``validate_fractions``, the
migrations reach it without loading a model, and the services that start a job check its
settings with ``is_integer_in``. The JSON-object and string-list checks are every app's
(``core.validators``); the migrations name them by this module, so it keeps those names.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from core.validators import validate_json_object, validate_string_list

__all__ = ["is_integer_in", "validate_fractions", "validate_json_object", "validate_string_list"]


def validate_fractions(value: Any) -> None:
    if not isinstance(value, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and 0 < v <= 1 for v in value
    ):
        raise ValidationError("must be a list of fractions in (0, 1]")


def is_integer_in(value: Any, low: int, high: int) -> bool:
    """Whether ``value`` is an integer (not a bool) from ``low`` to ``high``."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
