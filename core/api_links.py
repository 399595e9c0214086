"""The ``links`` of an API object: absolute URLs of its pages and endpoints, by key."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

__all__ = ["LinksField"]


@extend_schema_field(
    {"type": "object", "additionalProperties": {"type": "string"}, "readOnly": True}
)
class LinksField(serializers.Field):
    """``LinksField(page="search:run_detail", pulls="search-run-pulls")``: each named URL takes
    the object's primary key and is answered absolute (the request's scheme and host)."""

    def __init__(self, **names: str) -> None:
        self.names = names
        super().__init__(source="*", read_only=True)

    def to_representation(self, value: Any) -> dict[str, str]:
        request = self.context["request"]
        return {
            key: request.build_absolute_uri(reverse(name, args=[value.pk]))
            for key, name in self.names.items()
        }
