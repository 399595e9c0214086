"""REST API for rankings and discrimination analyses (staff only, like the pages).

Both are ranking jobs on the kernel's :class:`core.api_jobs.CheckedJobViewSet` (list, detail,
cancel, a start from a checked body):
every job is looked up through its selectors (a 404 for what the user may not see); a new one
goes through its start service, whose refusal is a 400 whose ``errors`` name each field (and
say why a subject cannot be measured), with nothing written; its result is exported as a file
once it is done.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_jobs import CheckedJobViewSet, JobConfigErrorSerializer, JobControlErrorSerializer
from core.api_negotiation import FileNegotiation
from ranking import downloads, selectors
from ranking.api.serializers import (
    AnalysisCreateSerializer,
    AnalysisListSerializer,
    AnalysisSerializer,
    RankingCreateSerializer,
    RankingListSerializer,
    RankingSerializer,
)
from ranking.models import RankingJob, SystemRanking
from ranking.services import RankingStateError, cancel_ranking, start_ranking
from ranking.subsets import selectors as analysis_selectors
from ranking.subsets.models import DiscriminationAnalysis
from ranking.subsets.services import cancel_analysis, start_analysis


class RankingJobViewSet(CheckedJobViewSet):
    """A kind of ranking job's API: the kernel's list, detail and cancel, a start from a
    checked body (``create_serializer``, then ``start_job``), and ``export`` of the result.

    A subclass names those, its ``model`` and the large fields a list leaves out (``heavy``);
    the schema of ``create`` and ``export`` follows from them.
    """

    state_error = RankingStateError
    # Read afresh: the page's joins (created_by, the source) as the detail shows them.
    reread_detail = True
    model: ClassVar[type[RankingJob]]
    heavy: ClassVar[tuple[str, ...]] = ("scores", "result")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "create_serializer" not in cls.__dict__:
            return
        formats = downloads.formats(cls.model)
        as_parameter = OpenApiParameter(
            "as", OpenApiTypes.STR, enum=formats, description=f"One of {', '.join(formats)}."
        )
        extend_schema_view(
            export=extend_schema(
                parameters=[as_parameter],
                responses={
                    (200, "text/plain"): OpenApiTypes.BINARY,
                    400: JobConfigErrorSerializer,
                    409: OpenApiResponse(JobControlErrorSerializer, description="not done yet"),
                },
            ),
        )(cls)

    def get_queryset(self) -> Any:
        jobs = super().get_queryset()
        return jobs.defer(*self.heavy) if self.action == "list" else jobs

    @action(detail=True, methods=["get"], content_negotiation_class=FileNegotiation)
    def export(self, request: Request, pk: Any = None) -> HttpResponse | Response:
        """The result as a file (a ranking's table as a findings paper prints it)."""
        fmt = request.query_params.get("as", "")
        formats = downloads.formats(self.model)
        if fmt not in formats:
            detail = f"as: must be one of {', '.join(formats)}"
            return Response(
                {"detail": detail, "errors": {"as": detail}}, status=status.HTTP_400_BAD_REQUEST
            )
        job = self.get_object()
        if reason := job.not_done_reason():
            return Response({"detail": reason}, status=status.HTTP_409_CONFLICT)
        return downloads.result_file(job, fmt)


class RankingViewSet(RankingJobViewSet):
    """Rankings of MT systems (staff only): start one, follow it, read its result, export its
    table as CSV, LaTeX, Typst or JSON, cancel it."""

    model = SystemRanking
    list_serializer = RankingListSerializer
    detail_serializer = RankingSerializer
    create_serializer = RankingCreateSerializer
    objects_for_user = staticmethod(selectors.rankings_for_user)
    object_for_user = staticmethod(selectors.ranking_for_user)
    start_job = staticmethod(start_ranking)
    cancel_job = staticmethod(cancel_ranking)


class DiscriminationAnalysisViewSet(RankingJobViewSet):
    """How well a subset separates MT systems (staff only): start an analysis of a frozen
    version, a dataset's hardest segments or an MT-breaker comparison, follow it, read its
    result, export it as CSV or JSON, cancel it."""

    model = DiscriminationAnalysis
    heavy = ("scores", "state", "result")
    list_serializer = AnalysisListSerializer
    detail_serializer = AnalysisSerializer
    create_serializer = AnalysisCreateSerializer
    objects_for_user = staticmethod(analysis_selectors.analyses_for_user)
    object_for_user = staticmethod(analysis_selectors.analysis_for_user)
    start_job = staticmethod(start_analysis)
    cancel_job = staticmethod(cancel_analysis)
