"""Checks of the ranking jobs' values, shared by every ranking model and service.

A module of their own (no models): ``ranking.models``, ``ranking.subsets.models`` and
``ranking.replays.models`` all name the JSON-field validators, the migrations reach them without
loading a model, and the services that start a job check its settings with ``is_integer_in``.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError


def validate_json_object(value: Any) -> None:
    if not isinstance(value, dict):
        raise ValidationError("must be a JSON object")


def validate_string_list(value: Any) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValidationError("must be a list of strings")


def validate_fractions(value: Any) -> None:
    if not isinstance(value, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and 0 < v <= 1 for v in value
    ):
        raise ValidationError("must be a list of fractions in (0, 1]")


def is_integer_in(value: Any, low: int, high: int) -> bool:
    """Whether ``value`` is an integer (not a bool) from ``low`` to ``high``."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
