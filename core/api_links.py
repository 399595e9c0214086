"""The ``links`` (or the one ``page``) of an API object: absolute URLs of its pages and
endpoints, by key."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

__all__ = ["LinksField", "PageField"]


def _absolute_url(context: dict[str, Any], name: str, value: Any) -> str:
    """The URL ``name`` of ``value`` (its primary key), with the request's scheme and host."""
    return context["request"].build_absolute_uri(reverse(name, args=[value.pk]))


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
        return {key: _absolute_url(self.context, name, value) for key, name in self.names.items()}


@extend_schema_field({"type": "string", "readOnly": True})
class PageField(serializers.Field):
    """``PageField("lexical:rule_job")``: the absolute URL of the object's page (the named URL
    takes its primary key), for an object whose only link is its page."""

    def __init__(self, url_name: str) -> None:
        self.url_name = url_name
        super().__init__(source="*", read_only=True)

    def to_representation(self, value: Any) -> str:
        return _absolute_url(self.context, self.url_name, value)
