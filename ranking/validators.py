"""Validators of the ranking jobs' JSON fields, shared by every ranking model.

A module of their own (no models): ``ranking.models``, ``ranking.subsets.models`` and
``ranking.replays.models`` all name them, and the migrations reach them without loading a model.
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
