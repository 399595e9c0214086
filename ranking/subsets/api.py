"""REST API for discrimination analyses (staff only, like the pages).

Every analysis is looked up through ``ranking.subsets.selectors`` (a 404 for what the user may
not see); a new one goes through ``services.start_analysis``, whose refusal is a 400 whose
``errors`` name each field and say why (e.g. a version whose items come from no dataset), with
nothing written.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_parsers import StrictJSONParser
from core.http import download
from ranking.api.serializers import RankingErrorSerializer
from ranking.api.views import FileNegotiation
from ranking.subsets import exports, inputs, selectors
from ranking.subsets.models import DiscriminationAnalysis
from ranking.subsets.services import (
    MAX_RANDOM,
    MAX_RESAMPLES,
    MAX_SEED,
    AnalysisError,
    AnalysisStateError,
    cancel_analysis,
    start_analysis,
)

EXPORT_FORMATS = {"csv": "text/csv; charset=utf-8", "json": "application/json"}


class AnalysisCreateSerializer(serializers.Serializer):
    subject_kind = serializers.ChoiceField(choices=DiscriminationAnalysis.SubjectKind.choices)
    version = serializers.PrimaryKeyRelatedField(
        queryset=DiscriminationAnalysis.objects.none(), required=False, allow_null=True,
        help_text="Frozen challenge-set version id (subject_kind version).",
    )  # fmt: skip
    evaluation = serializers.PrimaryKeyRelatedField(
        queryset=DiscriminationAnalysis.objects.none(), required=False, allow_null=True,
        help_text="Finished DEC evaluation id whose estimator orders the segments (hardest).",
    )  # fmt: skip
    dataset = serializers.PrimaryKeyRelatedField(
        queryset=DiscriminationAnalysis.objects.none(), required=False, allow_null=True,
        help_text="Difficulty dataset id (hardest; may be left out with an evaluation).",
    )  # fmt: skip
    estimator = serializers.CharField(
        max_length=200, required=False, allow_blank=True, default="",
        help_text=f"An estimator of the evaluation, or {inputs.ORACLE!r} (mean human score).",
    )  # fmt: skip
    comparison = serializers.CharField(
        max_length=200, required=False, allow_blank=True, default="",
        help_text="MT-breaker comparison name.",
    )  # fmt: skip
    language_pair = serializers.CharField(max_length=40, required=False, allow_blank=True,
                                          default="")  # fmt: skip
    score = serializers.ChoiceField(choices=[inputs.QE, inputs.HUMAN], required=False,
                                    allow_blank=True, default="")  # fmt: skip
    test = serializers.ChoiceField(choices=DiscriminationAnalysis.Test.choices,
                                   default="permutation")  # fmt: skip
    n_resamples = serializers.IntegerField(default=1000, min_value=1, max_value=MAX_RESAMPLES)
    n_random = serializers.IntegerField(default=20, min_value=2, max_value=MAX_RANDOM)
    alpha = serializers.FloatField(default=0.05, min_value=0.0001, max_value=0.5)
    seed = serializers.IntegerField(default=0, min_value=0, max_value=MAX_SEED)
    fractions = serializers.ListField(
        child=serializers.FloatField(min_value=0.0001, max_value=1.0), required=False,
        min_length=1, max_length=20, help_text="Subset sizes as fractions (hardest only).",
    )  # fmt: skip
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The OpenAPI schema builds this without a request: then nothing is offered.
        user = getattr(self.context.get("request"), "user", None)
        fields: Any = self.fields
        fields["version"].queryset = selectors.versions_for(user)
        fields["evaluation"].queryset = selectors.evaluations_for(user)
        fields["dataset"].queryset = selectors.datasets_for(user)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A misspelt field ("n_randoms") would silently take its default otherwise.
        if isinstance(self.initial_data, dict):
            unknown = sorted(set(self.initial_data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: "unknown field" for name in unknown})
        return attrs


class AnalysisSerializer(serializers.ModelSerializer):
    """An analysis's subject, settings, status and (once done) its result."""

    created_by: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    is_finished = serializers.BooleanField(read_only=True)
    links = serializers.SerializerMethodField()

    class Meta:
        model = DiscriminationAnalysis
        fields = [
            "id", "name", "subject_kind", "version", "dataset", "evaluation", "estimator",
            "comparison", "language_pair", "score", "test", "n_resamples", "n_random", "alpha",
            "seed", "fractions", "status", "is_finished", "points_done", "points_total",
            "systems", "error", "result", "created_by", "created_at", "finished_at", "links",
        ]  # fmt: skip
        read_only_fields = fields

    def get_links(self, analysis: DiscriminationAnalysis) -> dict[str, str]:
        request = self.context["request"]
        page = reverse("ranking:discrimination_detail", args=[analysis.pk])
        export = reverse("discrimination-analysis-export", args=[analysis.pk])
        links = {"page": request.build_absolute_uri(page)}
        for fmt in EXPORT_FORMATS:
            links[fmt] = request.build_absolute_uri(f"{export}?as={fmt}")
        return links


class AnalysisListSerializer(AnalysisSerializer):
    class Meta(AnalysisSerializer.Meta):
        fields = [f for f in AnalysisSerializer.Meta.fields if f != "result"]
        read_only_fields = fields


class DiscriminationAnalysisViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """How well a subset separates MT systems (staff only): start an analysis of a frozen
    version, a dataset's hardest segments or an MT-breaker comparison, follow it, read its
    result, export it as CSV or JSON, cancel it."""

    permission_classes = [IsAdminUser]
    parser_classes = [StrictJSONParser]
    queryset = DiscriminationAnalysis.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self):
        analyses = selectors.analyses_for_user(self.request.user)
        if self.action == "list":
            analyses = analyses.defer("scores", "state", "result")
        return analyses

    def get_object(self) -> DiscriminationAnalysis:
        return selectors.analysis_for_user(self.request.user, self.kwargs["pk"])

    def get_serializer_class(self):
        return AnalysisListSerializer if self.action == "list" else AnalysisSerializer

    @extend_schema(
        request=AnalysisCreateSerializer,
        responses={201: AnalysisSerializer, 400: RankingErrorSerializer},
    )
    def create(self, request: Request) -> Response:
        """Start an analysis: the subject is read now (a refusal says why), then queued."""
        body = AnalysisCreateSerializer(data=request.data, context={"request": request})
        body.is_valid(raise_exception=True)
        try:
            analysis = start_analysis(**body.validated_data, created_by=request.user)
        except AnalysisError as exc:
            return Response(
                {"detail": str(exc), "errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST
            )
        data = AnalysisSerializer(analysis, context=self.get_serializer_context()).data
        return Response(data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=None,
        responses={200: AnalysisSerializer, 409: OpenApiResponse(RankingErrorSerializer)},
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk=None) -> Response:
        try:
            analysis = cancel_analysis(self.get_object())
        except AnalysisStateError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(AnalysisSerializer(analysis, context=self.get_serializer_context()).data)

    @extend_schema(
        parameters=[OpenApiParameter("as", OpenApiTypes.STR, enum=list(EXPORT_FORMATS),
                                     description="csv (spreadsheet-safe) or json.")],
        responses={(200, "text/plain"): OpenApiTypes.BINARY, 400: RankingErrorSerializer,
                   409: OpenApiResponse(RankingErrorSerializer, description="not done yet")},
    )  # fmt: skip
    @action(detail=True, methods=["get"], content_negotiation_class=FileNegotiation)
    def export(self, request: Request, pk=None) -> HttpResponse | Response:
        fmt = request.query_params.get("as", "")
        if fmt not in EXPORT_FORMATS:
            detail = f"as: must be one of {', '.join(EXPORT_FORMATS)}"
            return Response(
                {"detail": detail, "errors": {"as": detail}}, status=status.HTTP_400_BAD_REQUEST
            )
        analysis = self.get_object()
        if analysis.status != DiscriminationAnalysis.Status.DONE:
            detail = f"the analysis is {analysis.status}; its result exists once it is done"
            return Response({"detail": detail}, status=status.HTTP_409_CONFLICT)
        content = (exports.csv_download if fmt == "csv" else exports.json_download)(analysis.result)
        return download(content, f"discrimination-{analysis.pk}.{fmt}", EXPORT_FORMATS[fmt])
