from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.files import File
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_jobs import JobReadViewSet
from imports import ImportRefused, selectors, services
from imports.api.serializers import ImportJobSerializer
from imports.models import ImportJob


class ImportJobViewSet(JobReadViewSet):
    """Background imports: an upload above ``IMPORT_INLINE_MAX_MB`` answers 202 with one of
    these; poll it until ``status`` is ``done`` (see ``result_url``) or ``failed`` (see
    ``errors``). Each user sees their own jobs; staff see all."""

    list_serializer = detail_serializer = ImportJobSerializer
    objects_for_user = staticmethod(selectors.jobs_for_user)
    object_for_user = staticmethod(selectors.job_for_user)


def accepted(job: ImportJob, request: Request) -> Response:
    """The 202 an importing endpoint answers when it handed the file to a worker."""
    data = ImportJobSerializer(job, context={"request": request}).data
    return Response(data, status=202, headers={"Location": data["url"]})


def import_in_background(
    request: Request, kind: str, upload: File, options: Mapping[str, Any]
) -> Response:
    """Hand ``upload`` (a file above ``IMPORT_INLINE_MAX_MB``) to a worker as an import of
    ``kind``: :func:`accepted`, or the 400 of a refusal (each reason in ``errors``, the first
    in ``detail``) with nothing written."""
    try:
        job = services.start_import(kind, upload, options, created_by=request.user)
    except ImportRefused as exc:
        return Response({"detail": exc.errors[0], "errors": exc.errors}, status=400)
    return accepted(job, request)
