"""The JSON-field validators the apps' models share: a JSON object, a list of strings.

A module of their own (no models), so that the models of every app and their migrations name
one function for one check.
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
