"""Request types for annotations."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """A request that went through django-htmx's middleware, which sets ``request.htmx``."""

    htmx: HtmxDetails
