"""REST API for difficulty datasets and DEC evaluations (seed 002).

Staff only, like the pages; every dataset and evaluation is looked up through
``difficulty.selectors`` (a 404 for what the user may not see); writes go through
``difficulty.services``, and a refused input is a 400 with ``detail``, nothing written.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_jobs import JobViewSet
from core.api_negotiation import FileNegotiation
from core.api_viewsets import ScopedReadViewSet
from core.http import streamed_download
from difficulty import selectors
from difficulty.api.serializers import (
    DatasetFromCampaignSerializer,
    DatasetImportSerializer,
    DifficultyDatasetDetailSerializer,
    DifficultyDatasetSerializer,
    DifficultyErrorSerializer,
    DifficultyEvaluationSerializer,
    DifficultySegmentSerializer,
    EvaluationCreateSerializer,
    EvaluationResultsSerializer,
    EvaluationStateErrorSerializer,
)
from difficulty.import_kinds import (
    DATASET_KIND,
    dataset_fields,
    dataset_options,
    upload_options,
)
from difficulty.models import DifficultyDataset, DifficultyEvaluation
from difficulty.services import (
    DatasetFormatError,
    DifficultyDatasetError,
    build_difficulty_dataset_from_campaign,
    cancel_difficulty_evaluation,
    import_difficulty_file,
    start_difficulty_evaluation,
)
from imports import services as import_services
from imports.api.serializers import ImportJobSerializer
from imports.api.views import import_in_background


def _refused(exc: Exception) -> Response:
    if isinstance(exc, DatasetFormatError):
        errors = exc.errors + (["(more errors not shown)"] if exc.truncated else [])
        return Response({"detail": str(exc), "errors": errors}, status=status.HTTP_400_BAD_REQUEST)
    return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)


class DifficultyDatasetViewSet(ScopedReadViewSet):
    """Difficulty datasets (staff only): list, retrieve with language pairs and systems, import
    a WMT-style JSONL file or a Google MQM TSV, build one from an ESA or MQM campaign, browse
    segments."""

    permission_classes = [IsAdminUser]
    list_serializer = DifficultyDatasetSerializer
    detail_serializer = DifficultyDatasetDetailSerializer
    objects_for_user = staticmethod(selectors.datasets_for_user)
    object_for_user = staticmethod(selectors.dataset_for_user)

    def get_queryset(self):
        return (
            super()
            .get_queryset()
            .select_related("created_by")
            .annotate(n_evaluations=Count("evaluations"))
            .order_by("-created_at", "-id")  # Meta.ordering does not survive the GROUP BY
        )

    def get_object(self) -> DifficultyDataset:
        dataset = super().get_object()
        dataset.n_evaluations = dataset.evaluations.count()
        return dataset

    def _created(self, dataset: DifficultyDataset) -> Response:
        dataset = self.get_queryset().get(pk=dataset.pk)
        context = self.get_serializer_context()
        data = DifficultyDatasetDetailSerializer(dataset, context=context).data
        return Response(data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request={"multipart/form-data": DatasetImportSerializer},
        responses={
            201: DifficultyDatasetDetailSerializer,
            202: ImportJobSerializer,
            400: DifficultyErrorSerializer,
        },
    )
    @action(detail=False, methods=["post"], url_path="import", url_name="import")
    def import_file(self, request: Request) -> Response:
        """Import a file in any dataset format (multipart ``file``, ``format`` ``auto`` by
        default: WMT-style JSONL, a Google MQM TSV or its ``.tar.gz``, an mt-metrics-eval test
        set archive with ``human_score``, a WMT DA release with ``da_score``; ``langs`` for a
        TSV); all or nothing: a refused file is a 400 whose ``detail`` and ``errors`` name each
        bad line and file, or in one message the format the file looks like when it is not the
        one given, or the human scores on offer. A file above
        ``IMPORT_INLINE_MAX_MB`` is imported by a worker: 202 with the import job (poll its
        ``url``; ``Location`` names it too)."""
        body = DatasetImportSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        upload = body.validated_data["file"]
        options = upload_options(body.validated_data, body.reference_rule(), body.release_choices())
        if import_services.runs_in_background(upload):
            return import_in_background(request, DATASET_KIND, upload, dataset_options(**options))
        try:
            dataset = import_difficulty_file(upload, **options, created_by=request.user)
        except (DatasetFormatError, DifficultyDatasetError) as exc:
            return _refused(exc)
        return self._created(dataset)

    @extend_schema(
        request=DatasetFromCampaignSerializer,
        responses={201: DifficultyDatasetDetailSerializer, 400: DifficultyErrorSerializer},
    )
    @action(detail=False, methods=["post"], url_path="from-campaign", url_name="from-campaign")
    def from_campaign(self, request: Request) -> Response:
        """Build a dataset from an ESA or MQM campaign's submitted scores (items' systems ×
        mean score)."""
        body = DatasetFromCampaignSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        fields = dataset_fields(data, body.reference_rule())
        try:
            dataset = build_difficulty_dataset_from_campaign(
                data["campaign"], **fields, created_by=request.user
            )
        except DifficultyDatasetError as exc:
            return _refused(exc)
        return self._created(dataset)

    @extend_schema(
        parameters=[
            OpenApiParameter("lp", OpenApiTypes.STR, description="Only this language pair.")
        ],
        responses=DifficultySegmentSerializer(many=True),
    )
    @action(detail=True, methods=["get"])
    def segments(self, request: Request, pk=None) -> Response:
        """The dataset's segments as imported, by language pair and row (paginated)."""
        dataset = self.get_object()
        rows = selectors.segments_page(dataset, request.query_params.get("lp") or None)
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(DifficultySegmentSerializer(page, many=True).data)

    @extend_schema(responses={(200, "application/jsonl"): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"], content_negotiation_class=FileNegotiation)
    def export(self, request: Request, pk=None) -> StreamingHttpResponse:
        """The dataset as the JSONL ``import`` reads, one segment per line (streamed)."""
        dataset = self.get_object()
        return streamed_download(
            selectors.dataset_jsonl(dataset),
            selectors.dataset_file_name(dataset),
            "application/jsonl; charset=utf-8",
        )


RESULTS_RESPONSES = {
    200: EvaluationResultsSerializer,
    409: OpenApiResponse(
        EvaluationStateErrorSerializer, description="the evaluation has not finished"
    ),
}


class DifficultyEvaluationViewSet(JobViewSet):
    """DEC evaluations (staff only): start one on a dataset, follow its progress, cancel it,
    read its results once ``status`` is ``done``."""

    list_serializer = detail_serializer = DifficultyEvaluationSerializer
    objects_for_user = staticmethod(selectors.evaluations_for_user)
    object_for_user = staticmethod(selectors.evaluation_for_user)
    # Its cancel answers a 409 with the status it found (EvaluationStateError), written below.
    controls = ()
    reread_detail = True

    def get_queryset(self):
        evaluations = super().get_queryset().select_related("created_by")
        dataset = self.request.query_params.get("dataset", "")
        if dataset.isdigit():
            evaluations = evaluations.filter(dataset_id=int(dataset))
        return evaluations

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "dataset", OpenApiTypes.INT, description="Only the evaluations of this dataset."
            )
        ]
    )
    def list(self, request: Request, *args, **kwargs) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=EvaluationCreateSerializer,
        responses={201: DifficultyEvaluationSerializer, 400: DifficultyErrorSerializer},
    )
    def create(self, request: Request) -> Response:
        """Start an evaluation; its first round is queued for the workers at once."""
        body = EvaluationCreateSerializer(data=request.data, context={"request": request})
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            evaluation = start_difficulty_evaluation(
                data["dataset"],
                data["estimators"],
                subset_fraction=data["subset_fraction"],
                seed=data["seed"],
                n_bootstrap=data["n_bootstrap"],
                include_references=data["include_references"],
                created_by=request.user,
            )
        except DifficultyDatasetError as exc:
            return _refused(exc)
        return Response(self.detail_data(evaluation), status=status.HTTP_201_CREATED)

    @extend_schema(
        request=None,
        responses={
            200: DifficultyEvaluationSerializer,
            409: OpenApiResponse(
                EvaluationStateErrorSerializer, description="it had finished already"
            ),
        },
    )
    # Its own action in place of the kernel's (stubs type an action by its class: override).
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: Any = None) -> Response:  # type: ignore[override]
        """Stop an evaluation that has not finished; a round in flight stops at its next unit."""
        evaluation = self.get_object()
        if not cancel_difficulty_evaluation(evaluation):
            evaluation.refresh_from_db(fields=["status"])
            detail = f"the evaluation is {evaluation.status}: there is nothing to cancel"
            return Response(
                {"detail": detail, "status": evaluation.status}, status=status.HTTP_409_CONFLICT
            )
        return Response(self.detail_data(evaluation))

    @extend_schema(responses=RESULTS_RESPONSES)
    @action(detail=True, methods=["get"])
    def results(self, request: Request, pk=None) -> Response:
        """DEC with its bootstrap interval, Pearson and the hardest subset's AvgScore and
        %Perfect per estimator, per language pair, and the random-selection baseline."""
        evaluation = self.get_object()
        if evaluation.status != DifficultyEvaluation.Status.DONE:
            detail = f"the evaluation is {evaluation.status}; results exist once it is done"
            if evaluation.error:
                detail += f" (error: {evaluation.error})"
            return Response(
                {"detail": detail, "status": evaluation.status}, status=status.HTTP_409_CONFLICT
            )
        return Response(evaluation.results)
