"""Every API error is JSON with a ``detail`` message, whoever raised it.

Three sources of errors reach an API client: DRF's own exceptions (field errors come keyed by
field, with no ``detail``), Django's exceptions raised while DRF reads the body (a body over
``DATA_UPLOAD_MAX_MEMORY_SIZE``, Django's ``ValidationError`` from a model's ``full_clean``),
and the errors Django answers before or after DRF runs (an unknown URL, a crash), which are HTML
pages by default. :func:`api_exception_handler` covers the first two; the ``handler*`` views
(wired in ``config/urls.py``) answer JSON under ``/api/`` and Django's pages elsewhere, and
:class:`ApiNotFoundMiddleware` keeps a 404 JSON when ``DEBUG`` bypasses ``handler404``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import (
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.serializers import as_serializer_error
from rest_framework.views import exception_handler

from core.uploads import body_limit_text


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"


def _too_large_message() -> str:
    # Not only imports meet it (an annotation's answer too): the file advice comes second.
    return (
        f"The request body is larger than {body_limit_text()}, the most the API reads into "
        "memory; an import takes a larger file as a multipart upload in the 'file' field."
    )


def _summary(data: Any) -> str:
    """One line out of DRF's error structure: ``field: first message; other: ...``."""
    if isinstance(data, dict):
        return "; ".join(f"{key}: {_summary(value)}" for key, value in data.items())
    if isinstance(data, list):
        return _summary(data[0]) if data else ""
    return str(data)


def with_detail(data: Any) -> dict[str, Any]:
    """``data`` (DRF's error body) with a ``detail`` line added when it has none."""
    if isinstance(data, dict):
        return data if "detail" in data else {"detail": _summary(data), **data}
    return {"detail": _summary(data), "errors": data}


def field_errors(errors: dict[str, Any]) -> dict[str, Any]:
    """A 400 body for field problems: ``{"detail": one line, "errors": {field: message}}``."""
    return {"detail": _summary(errors), "errors": errors}


def _as_api_exception(exc: Exception) -> Exception:
    if isinstance(exc, RequestDataTooBig):
        return PayloadTooLarge(_too_large_message())
    if isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        return exceptions.ParseError(str(exc))
    if isinstance(exc, DjangoValidationError):
        return exceptions.ValidationError(as_serializer_error(exc))
    return exc


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> HttpResponse | None:
    """DRF's handler, for Django's request-size and validation errors too, always with
    ``detail``; anything else still propagates (a 500, answered by :func:`server_error`)."""
    response = exception_handler(_as_api_exception(exc), context)
    if response is not None:
        response.data = with_detail(response.data)
    return response


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if not _is_api(request):
        return defaults.bad_request(request, exception)
    if isinstance(exception, RequestDataTooBig):
        return JsonResponse({"detail": _too_large_message()}, status=413)
    detail = str(exception) if isinstance(exception, SuspiciousOperation) else "Bad request."
    return JsonResponse({"detail": detail or "Bad request."}, status=400)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if not _is_api(request):
        return defaults.permission_denied(request, exception)
    return JsonResponse(
        {"detail": "You do not have permission to perform this action."}, status=403
    )


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if not _is_api(request):
        return defaults.page_not_found(request, exception)
    return JsonResponse({"detail": "Not found."}, status=404)


class ApiNotFoundMiddleware:
    """A 404 under ``/api/`` is JSON even with ``DEBUG`` on, when Django answers an unknown URL
    with its technical page and never calls ``handler404`` (an API client cannot read HTML)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code == 404
            and _is_api(request)
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            return JsonResponse({"detail": "Not found."}, status=404)
        return response


def server_error(request: HttpRequest) -> HttpResponse:
    if not _is_api(request):
        return defaults.server_error(request)
    return JsonResponse({"detail": "Server error."}, status=500)
