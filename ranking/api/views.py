"""REST API for rankings (staff only, like the pages).

Every ranking is looked up through ``ranking.selectors`` (a 404 for what the user may not see);
a new ranking goes through ``ranking.services.start_ranking``, whose refusal is a 400 whose
``errors`` name each field, with nothing written.
"""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_parsers import StrictJSONParser
from core.http import download
from ranking import selectors, tables
from ranking.api.serializers import (
    EXPORT_FORMATS,
    RankingCreateSerializer,
    RankingErrorSerializer,
    RankingListSerializer,
    RankingSerializer,
)
from ranking.models import SystemRanking
from ranking.services import RankingError, RankingStateError, cancel_ranking, start_ranking


class FileNegotiation(DefaultContentNegotiation):
    """The export is the file asked for whatever the client accepts; errors stay JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class RankingViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Rankings of MT systems (staff only): start one, follow it, read its result, export its
    table as CSV, LaTeX, Typst or JSON, cancel it."""

    permission_classes = [IsAdminUser]
    parser_classes = [StrictJSONParser]
    queryset = SystemRanking.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self):
        rankings = selectors.rankings_for_user(self.request.user)
        if self.action == "list":
            rankings = rankings.defer("scores", "result")
        return rankings

    def get_object(self) -> SystemRanking:
        return selectors.ranking_for_user(self.request.user, self.kwargs["pk"])

    def get_serializer_class(self):
        return RankingListSerializer if self.action == "list" else RankingSerializer

    def _data(self, ranking: SystemRanking) -> dict:
        ranking = selectors.ranking_for_user(self.request.user, ranking.pk)
        return RankingSerializer(ranking, context=self.get_serializer_context()).data

    @extend_schema(
        request=RankingCreateSerializer,
        responses={201: RankingSerializer, 400: RankingErrorSerializer},
    )
    def create(self, request: Request) -> Response:
        """Start a ranking; its first round is queued for the workers at once."""
        body = RankingCreateSerializer(data=request.data, context={"request": request})
        body.is_valid(raise_exception=True)
        try:
            ranking = start_ranking(**body.validated_data, created_by=request.user)
        except RankingError as exc:
            return Response(
                {"detail": str(exc), "errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST
            )
        return Response(self._data(ranking), status=status.HTTP_201_CREATED)

    @extend_schema(
        request=None,
        responses={
            200: RankingSerializer,
            409: OpenApiResponse(RankingErrorSerializer, description="it had finished already"),
        },
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk=None) -> Response:
        try:
            ranking = cancel_ranking(self.get_object())
        except RankingStateError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(self._data(ranking))

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "as",
                OpenApiTypes.STR,
                enum=list(EXPORT_FORMATS),
                description="csv (spreadsheet-safe), latex (booktabs), typst, or json.",
            )
        ],
        responses={
            (200, "text/plain"): OpenApiTypes.BINARY,
            400: RankingErrorSerializer,
            409: OpenApiResponse(RankingErrorSerializer, description="not done yet"),
        },
    )
    @action(detail=True, methods=["get"], content_negotiation_class=FileNegotiation)
    def export(self, request: Request, pk=None) -> HttpResponse | Response:
        """The ranking's table as a findings paper prints it (clusters separated by rules)."""
        fmt = request.query_params.get("as", "")
        if fmt not in EXPORT_FORMATS:
            detail = f"as: must be one of {', '.join(EXPORT_FORMATS)}"
            return Response(
                {"detail": detail, "errors": {"as": detail}}, status=status.HTTP_400_BAD_REQUEST
            )
        ranking = self.get_object()
        if ranking.status != SystemRanking.Status.DONE:
            detail = f"the ranking is {ranking.status}; its table exists once it is done"
            if ranking.error:
                detail += f" (error: {ranking.error})"
            return Response({"detail": detail}, status=status.HTTP_409_CONFLICT)
        content_type, extension = tables.FORMATS[fmt]
        content = tables.render(ranking.result, fmt)
        return download(content, f"ranking-{ranking.pk}.{extension}", content_type)
