from __future__ import annotations

from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from imports import selectors
from imports.api.serializers import ImportJobSerializer
from imports.models import ImportJob


class ImportJobViewSet(viewsets.ReadOnlyModelViewSet):
    """Background imports: an upload above ``IMPORT_INLINE_MAX_MB`` answers 202 with one of
    these; poll it until ``status`` is ``done`` (see ``result_url``) or ``failed`` (see
    ``errors``). Each user sees their own jobs; staff see all."""

    serializer_class = ImportJobSerializer
    queryset = ImportJob.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self):
        return selectors.jobs_for_user(self.request.user)


def accepted(job: ImportJob, request: Request) -> Response:
    """The 202 an importing endpoint answers when it handed the file to a worker."""
    data = ImportJobSerializer(job, context={"request": request}).data
    return Response(data, status=202, headers={"Location": data["url"]})
