"""Serializer fields the apps' APIs share."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

__all__ = ["optional_text"]


def optional_text(default: str = "", **options: Any) -> serializers.CharField:
    """A text field a body may leave out or send blank: ``default`` then."""
    return serializers.CharField(required=False, allow_blank=True, default=default, **options)
