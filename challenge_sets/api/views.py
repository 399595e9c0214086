"""REST API for challenge sets: staff with the curation permission only.

Every set is looked up through ``challenge_sets.access`` (the same function the pages and
downloads use); writes go through the services; a refused request is a 400 with ``detail``
(and ``errors`` for a source's line-numbered problems), nothing written.
"""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from challenge_sets import access, exports, selectors, services, validation
from challenge_sets.api.serializers import (
    AddItemsSerializer,
    ChallengeItemSerializer,
    ChallengeSetCreateSerializer,
    ChallengeSetSerializer,
    DecideSerializer,
    FrozenVersionSerializer,
)
from challenge_sets.import_kinds import JSONL_KIND, in_background, jsonl_options
from challenge_sets.models import ChallengeSet
from challenge_sets.services import ChallengeSetError
from challenge_sets.sources import SourceError
from challenge_sets.versions import freeze_version
from imports.api.serializers import ImportJobSerializer
from imports.api.views import import_in_background


class MayCurate(BasePermission):
    def has_permission(self, request, view) -> bool:
        return access.may_curate(request.user)


def _refused(exc: Exception) -> Response:
    body: dict[str, Any] = {"detail": str(exc)}
    if isinstance(exc, SourceError):
        body["errors"] = exc.errors
    return Response(body, status=status.HTTP_400_BAD_REQUEST)


class ChallengeSetViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Challenge sets: create, list, add items from a source, send for validation, refresh
    human results, decide on items, freeze versions and download their exports."""

    permission_classes = [MayCurate]
    serializer_class = ChallengeSetSerializer
    queryset = ChallengeSet.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self):
        return selectors.set_rows(access.sets_for(self.request.user)).order_by("-created_at")

    def _set(self) -> ChallengeSet:
        return access.challenge_set_for(self.request.user, int(self.kwargs["pk"]))

    @extend_schema(request=ChallengeSetCreateSerializer, responses={201: ChallengeSetSerializer})
    def create(self, request: Request) -> Response:
        data = ChallengeSetCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            created = services.create_challenge_set(**data.validated_data, created_by=request.user)
        except ChallengeSetError as exc:
            return _refused(exc)
        row = self.get_queryset().get(pk=created.pk)
        return Response(ChallengeSetSerializer(row).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=AddItemsSerializer,
        responses={200: ChallengeItemSerializer(many=True), 202: ImportJobSerializer},
        parameters=[OpenApiParameter("status", str), OpenApiParameter("origin", str)],
    )
    @action(detail=True, methods=["get", "post"])
    def items(self, request: Request, pk=None) -> Response:
        """GET: the set's items (filters ``status``, ``origin``, ``lp``); POST: add items from a
        source (``source`` + ``params``; ``file`` for jsonl). A jsonl ``file`` above
        ``IMPORT_INLINE_MAX_MB`` is added by a worker: 202 with the import job."""
        challenge_set = self._set()
        if request.method == "GET":
            state = selectors.TableState.from_query(request.query_params)
            page = self.paginate_queryset(selectors.filtered_items(challenge_set, state))
            return self.get_paginated_response(ChallengeItemSerializer(page, many=True).data)
        data = AddItemsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = dict(data.validated_data["params"])
        upload = data.validated_data.get("file")
        if upload is not None:
            params["file"] = upload
        if in_background(data.validated_data["source"], upload):
            return self._in_background(request, challenge_set, upload)
        try:
            result = services.add_items_from_source(
                challenge_set, data.validated_data["source"], params, user=request.user
            )
        except SourceError as exc:
            return _refused(exc)
        return Response({"added": result.added, "skipped": result.skipped,
                         "near_duplicates": result.near_duplicates})  # fmt: skip

    def _in_background(self, request: Request, challenge_set, upload) -> Response:
        """A JSONL file above ``IMPORT_INLINE_MAX_MB``: 202 with the import job."""
        options = jsonl_options(challenge_set, upload.name)
        return import_in_background(request, JSONL_KIND, upload, options)

    @extend_schema(request=None, responses={200: dict})
    @action(detail=True, methods=["post"])
    def send(self, request: Request, pk=None) -> Response:
        challenge_set = self._set()
        try:
            sent, unsendable = validation.send_for_validation(challenge_set, user=request.user)
        except ChallengeSetError as exc:
            return _refused(exc)
        return Response({"sent": sent, "unsendable": unsendable,
                         "campaign": challenge_set.campaign_id})  # fmt: skip

    @extend_schema(request=None, responses={200: dict})
    @action(detail=True, methods=["post"])
    def refresh(self, request: Request, pk=None) -> Response:
        return Response({"updated": validation.refresh_results(self._set())})

    @extend_schema(request=DecideSerializer, responses={200: dict})
    @action(detail=True, methods=["post"])
    def decide(self, request: Request, pk=None) -> Response:
        challenge_set = self._set()
        data = DecideSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            n = services.decide_items(
                challenge_set, data.validated_data["items"], data.validated_data["status"],
                reason=data.validated_data["reason"], user=request.user,
            )  # fmt: skip
        except ChallengeSetError as exc:
            return _refused(exc)
        return Response({"decided": n})

    @extend_schema(request=None, responses={200: FrozenVersionSerializer(many=True)})
    @action(detail=True, methods=["get", "post"], pagination_class=None)  # the whole list
    def versions(self, request: Request, pk=None) -> Response:
        """GET: the frozen versions; POST: freeze a new one (201)."""
        challenge_set = self._set()
        if request.method == "POST":
            try:
                version = freeze_version(challenge_set, user=request.user)
            except ChallengeSetError as exc:
                return _refused(exc)
            return Response(FrozenVersionSerializer(version).data, status=201)
        rows = selectors.versions(challenge_set)
        return Response(FrozenVersionSerializer(rows, many=True).data)

    @extend_schema(
        parameters=[OpenApiParameter("export_format", str, description=", ".join(exports.FORMATS))],
        responses={(200, "application/octet-stream"): bytes},
    )
    @action(detail=True, methods=["get"], url_path=r"versions/(?P<number>\d+)/export")
    def export(self, request: Request, pk=None, number=None):
        """A frozen version's export, streamed: ``?export_format=jsonl|wmt-jsonl|sources|
        annotations|hf|manifest|dtails|dtails-extended`` (DTAiLS: lexical-selection items)."""
        challenge_set = self._set()
        version = selectors.version_of(challenge_set, int(number))
        if version is None:
            raise NotFound("No such version")
        fmt = request.query_params.get("export_format", "jsonl")
        try:
            chunks = exports.stream(version, fmt)
        except exports.ExportError as exc:
            return _refused(exc)
        response = StreamingHttpResponse(chunks, content_type=exports.content_type(version, fmt))
        response["Content-Disposition"] = f'attachment; filename="{exports.filename(version, fmt)}"'
        return response


__all__ = ["ChallengeSetViewSet"]
