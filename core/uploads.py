"""One size limit for every uploaded file, in forms and in the API (``UPLOAD_MAX_MB``).

Django already bounds what it holds in memory (``DATA_UPLOAD_MAX_MEMORY_SIZE`` for form fields,
``FILE_UPLOAD_MAX_MEMORY_SIZE`` before spooling to disk) but not the size of a file field; an
importer reads the whole file, so an unbounded upload is unbounded work. Bigger files go through
the management commands, which read from disk.
"""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.conf import settings
from django.core.exceptions import RequestDataTooBig, ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import format_html


def validate_upload_size(upload) -> None:
    """A form or serializer validator: refuse a file over ``settings.UPLOAD_MAX_BYTES``."""
    limit = settings.UPLOAD_MAX_BYTES
    if upload is not None and upload.size > limit:
        raise ValidationError(
            f"The file is larger than {limit // 2**20} MB; use the management command for "
            "big files.",
            code="file_too_large",
        )


class UploadField(forms.FileField):
    """A form's file field, refused over the upload limit (:func:`validate_upload_size`)."""

    default_validators = [validate_upload_size]


def body_limit_text() -> str:
    """The most of a request body Django reads into memory (``DATA_UPLOAD_MAX_MEMORY_SIZE``),
    as a refusal names it: ``2.5 MB``."""
    return f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE / 2**20:g} MB"


REQUEST_ERROR_ID = "request-error"
"""The element of every page (``templates/base.html``) where an htmx request's error goes."""


class PageBodyTooLargeMiddleware:
    """A page's POST over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is a 413 naming the limit, in the
    shape its sender reads: ``{"ok": false, "errors": [...]}`` for the pages' scripts (they send
    ``Accept: application/json``; the annotation draft and submit); for an htmx request, a
    small error partial retargeted to the page's ``#request-error`` (``HX-Retarget``), which
    ``static/js/hardset.js`` swaps in although htmx swaps no error answer by default, so the
    form's own target keeps its content; plain text otherwise.

    Django raises ``RequestDataTooBig`` wherever the body is first read: for a form that is
    ``CsrfViewMiddleware``, before any view could answer, so the client got Django's bare 400
    page (its debug page with ``DEBUG``). This reads it first, as the CSRF check or the view
    would (a form's fields, or the raw body of anything else; files are not counted). The API
    answers its own JSON 413 (``core.api_errors``) and DRF reads its bodies itself.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and not request.path.startswith("/api/"):
            try:
                # Parsing a form, or reading any other body (then cached), is the check.
                _ = request.POST if request.content_type == "multipart/form-data" else request.body
            except RequestDataTooBig:
                return _too_large(request)
        return self.get_response(request)


def _too_large(request: HttpRequest) -> HttpResponse:
    message = f"The request is larger than {body_limit_text()}, the most one form or save may send."
    if "application/json" in request.headers.get("Accept", ""):
        return JsonResponse({"ok": False, "errors": [message]}, status=413)
    if request.headers.get("HX-Request") == "true":
        return htmx_error(message, status=413)
    return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")


def htmx_error(message: str, *, status: int) -> HttpResponse:
    """An error answer to an htmx request: one alert paragraph, swapped into the page's
    ``#request-error`` instead of the requesting element's target."""
    fragment = format_html('<p class="message message-error" role="alert">{}</p>', message)
    response = HttpResponse(fragment, status=status)
    response["HX-Retarget"] = f"#{REQUEST_ERROR_ID}"
    response["HX-Reswap"] = "innerHTML"
    return response
