"""Request types for annotations, and file downloads."""

from __future__ import annotations

from collections.abc import Iterable

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """A request that went through django-htmx's middleware, which sets ``request.htmx``."""

    htmx: HtmxDetails


CSV = "text/csv; charset=utf-8"


def download(content: str | bytes, filename: str, content_type: str = CSV) -> HttpResponse:
    """A file the browser saves as ``filename``."""
    return _attachment(HttpResponse(content, content_type=content_type), filename)


def streamed_download(
    chunks: Iterable[str], filename: str, content_type: str = CSV
) -> StreamingHttpResponse:
    """A file sent as it is produced (large exports), saved as ``filename``."""
    return _attachment(StreamingHttpResponse(chunks, content_type=content_type), filename)


def _attachment(response, filename: str):
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
