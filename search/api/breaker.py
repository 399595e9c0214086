"""REST API for MT-breaker runs (seed 001): create from a config (or compare methods), list,
retrieve, pause/resume/cancel, chains, export. Staff only, like the pages; every run is looked
up through ``search.breaker.selectors``; a refused configuration is a 400 with ``errors``."""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_errors import field_errors
from core.api_jobs import (
    JobConfigErrorSerializer,
    JobControlErrorSerializer,
    JobSerializer,
    RoundJobViewSet,
    start_schema,
)
from core.api_links import LinksField
from search.breaker.data_quality import StatisticsConfigError, start_statistics
from search.breaker.human_report import calibration_report, human_report
from search.breaker.humans import SCORING_PROTOCOLS, SendError, send_to_annotation
from search.breaker.records import chain_record, jsonl_response, save_selected_as_samples
from search.breaker.selectors import (
    comparison_rows,
    mean_selected_quality,
    run_for_user,
    run_rows,
    statistics_of,
)
from search.breaker.services import (
    RunStateError,
    cancel_run,
    pause_run,
    resume_run,
    start_breaker_comparison,
    start_breaker_run,
)
from search.models import BreakerChain, BreakerRun, BreakerStatistics, BreakerStep


class BreakerRunSerializer(JobSerializer):
    method = serializers.CharField(read_only=True)
    llm_engine: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="name", read_only=True, allow_null=True
    )
    budget_money = serializers.FloatField(read_only=True, allow_null=True)
    mean_selected_quality = serializers.SerializerMethodField(
        help_text="Mean QE quality (0–100, lower = harder) of the chains' selected steps; "
        "null while no chain has one. The number the run list and the comparison rank by."
    )
    links = LinksField(
        page="search:breaker_detail",
        chains="breaker-run-chains",
        export="breaker-run-export",
    )

    class Meta:
        model = BreakerRun
        fields = [
            "id", "name", "comparison", "method", "status", "error", "llm_engine", "targets",
            "qe_engines", "src_lang", "tgt_lang", "n_steps", "k_generations", "max_edit_share",
            "target_words", "seed", "seeds_from", "budget_money", "round_index", "steps_done",
            "steps_total", "progress", "mean_selected_quality", "cost", "created_at",
            "started_at", "finished_at", "links",
        ]  # fmt: skip
        read_only_fields = fields

    def get_mean_selected_quality(self, run: BreakerRun) -> float | None:
        annotated = hasattr(run, "mean_selected")  # on the list's rows (one query for the page)
        mean = getattr(run, "mean_selected", None) if annotated else mean_selected_quality(run)
        return None if mean is None else round(mean, 4)  # no float noise (85.69999999999999)


class BreakerRunDetailSerializer(BreakerRunSerializer):
    class Meta(BreakerRunSerializer.Meta):
        fields = [*BreakerRunSerializer.Meta.fields, "curves"]
        read_only_fields = fields


class BreakerConfigSerializer(serializers.Serializer):
    """A run's configuration (documented here; validated by ``search.breaker.config``)."""

    name = serializers.CharField()
    method = serializers.ChoiceField(choices=BreakerRun.Method.choices, required=False)
    methods = serializers.ListField(
        child=serializers.ChoiceField(choices=BreakerRun.Method.choices), required=False,
        help_text="compare: one run per method on the same seeds",
    )  # fmt: skip
    llm = serializers.JSONField(required=False, help_text="Chat engine name or spec.")
    targets = serializers.JSONField(help_text="Translator engine names (several: Multi).")
    qe = serializers.JSONField(help_text="Quality-estimation engine names (averaged).")
    src_lang = serializers.CharField(required=False)
    tgt_lang = serializers.CharField()
    seeds = serializers.DictField(required=False, help_text="Seed spec ({'from': ...}).")
    n_steps = serializers.IntegerField(required=False)
    k_generations = serializers.IntegerField(required=False)
    max_edit_share = serializers.FloatField(required=False)
    n_items = serializers.IntegerField(required=False)
    target_words = serializers.IntegerField(required=False)
    seed = serializers.IntegerField(required=False)
    budget_money = serializers.FloatField(required=False)


class ChainRecordSerializer(serializers.Serializer):
    """A chain as the JSONL export writes it (documentation of ``chain_record``)."""

    run = serializers.IntegerField()
    method = serializers.CharField()
    chain = serializers.IntegerField()
    status = serializers.CharField()
    error = serializers.CharField()
    text = serializers.CharField()
    selected_step = serializers.IntegerField(allow_null=True)
    quality = serializers.FloatField(allow_null=True)
    engines = serializers.DictField()
    provenance = serializers.DictField()
    steps = serializers.ListField(child=serializers.DictField())


class SendSerializer(serializers.Serializer):
    """Send a finished run's selected texts to a new annotation campaign (validated by
    ``search.breaker.humans.send_to_annotation``)."""

    protocol = serializers.ChoiceField(choices=[*SCORING_PROTOCOLS, "translation"])
    overlap = serializers.IntegerField(required=False, default=1, min_value=1, max_value=10)
    comparison = serializers.BooleanField(
        required=False, default=False, help_text="send every run of this run's comparison"
    )


class SentSerializer(serializers.Serializer):
    campaign = serializers.IntegerField()
    name = serializers.CharField()
    protocol = serializers.CharField()
    items = serializers.IntegerField()
    runs = serializers.ListField(child=serializers.IntegerField())
    page = serializers.URLField()


class StatisticsSerializer(serializers.ModelSerializer):
    """A run's data-quality statistics (seed 001 §3.2, Table 2; formulas in ADR 0015)."""

    embedder: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="name", read_only=True
    )
    analyst: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="name", read_only=True
    )
    difficulty: serializers.SlugRelatedField = serializers.SlugRelatedField(
        source="difficulty_engine", slug_field="name", read_only=True
    )
    cost = serializers.FloatField(read_only=True)

    class Meta:
        model = BreakerStatistics
        fields = [
            "status", "error", "embedder", "analyst", "difficulty", "values", "texts",
            "chrf_signature", "cost", "created_at", "started_at", "finished_at",
        ]  # fmt: skip
        read_only_fields = fields


class StartStatisticsSerializer(serializers.Serializer):
    embedder = serializers.CharField(help_text="Engine with the embed capability.")
    analyst = serializers.CharField(help_text="Chat engine answering the source analysis.")
    difficulty = serializers.CharField(
        required=False, allow_blank=True, help_text="Optional source-only difficulty estimator."
    )


def _start_runs(config: Any, created_by: Any) -> list[BreakerRun]:
    """One run, or with ``methods`` one per method on the same seeds."""
    if isinstance(config, dict) and "methods" in config:
        return start_breaker_comparison(config, created_by=created_by)
    return [start_breaker_run(config, created_by=created_by)]


class BreakerRunViewSet(RoundJobViewSet):
    """MT-breaker runs (staff only). Controls act at the end of the round in flight."""

    list_serializer = BreakerRunSerializer
    detail_serializer = BreakerRunDetailSerializer
    objects_for_user = staticmethod(run_rows)
    object_for_user = staticmethod(run_for_user)
    cancel_job = staticmethod(cancel_run)
    pause_job = staticmethod(pause_run)
    resume_job = staticmethod(resume_run)
    state_error = RunStateError
    reread_detail = True

    @start_schema(BreakerConfigSerializer, BreakerRunDetailSerializer(many=True))
    def create(self, request: Request) -> Response:
        """Start a run from its configuration (or, with ``methods``, one per method): a list."""
        return self.started(_start_runs, lambda runs: [self.detail_data(run) for run in runs])

    @extend_schema(
        methods=["GET"],
        responses={200: StatisticsSerializer, 404: OpenApiResponse(description="none yet")},
    )
    @extend_schema(
        methods=["POST"],
        request=StartStatisticsSerializer,
        responses={
            202: StatisticsSerializer,
            400: JobConfigErrorSerializer,
            409: JobControlErrorSerializer,
        },
    )
    @action(detail=True, methods=["get", "post"])
    def statistics(self, request: Request, pk=None) -> Response:
        """GET: the run's data-quality statistics; POST: compute them (again) in the background."""
        run = self.get_object()
        if request.method == "GET":
            stats = statistics_of(run)
            if stats is None:
                return Response({"detail": "no statistics yet"}, status=status.HTTP_404_NOT_FOUND)
            return Response(StatisticsSerializer(stats).data)
        data = request.data if isinstance(request.data, dict) else {}
        fields = {k: data.get(k) for k in ("embedder", "analyst", "difficulty")}
        bad = {k: "must be an engine name (a string)" for k, v in fields.items()
               if v is not None and not isinstance(v, str)}  # fmt: skip
        if bad:
            return Response(field_errors(bad), status=status.HTTP_400_BAD_REQUEST)
        try:
            stats = start_statistics(
                run,
                embedder=fields["embedder"],
                analyst=fields["analyst"],
                difficulty=fields["difficulty"],
                requested_by=request.user,
            )
        except StatisticsConfigError as exc:
            return Response(field_errors(exc.errors), status=status.HTTP_400_BAD_REQUEST)
        except RunStateError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(StatisticsSerializer(stats).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(responses=ChainRecordSerializer(many=True))
    @action(detail=True, methods=["get"])
    def chains(self, request: Request, pk=None) -> Response:
        """The run's chains in order (paginated), each with its steps."""
        run = self.get_object()
        page = self.paginate_queryset(BreakerChain.objects.filter(run=run).order_by("index"))
        assert page is not None  # pagination is always on
        steps: dict[int, list[BreakerStep]] = {}
        for step in BreakerStep.objects.filter(chain__in=page).order_by("chain_id", "index"):
            steps.setdefault(step.chain_id, []).append(step)
        records = [chain_record(run, chain, steps.get(chain.pk, [])) for chain in page]
        return self.get_paginated_response(records)

    @extend_schema(responses={(200, "application/x-ndjson"): OpenApiTypes.STR})
    @action(detail=True, methods=["get"])
    def export(self, request: Request, pk=None) -> StreamingHttpResponse:
        """Every chain as JSON Lines: the selected text with its whole chain and provenance."""
        return jsonl_response(self.get_object())

    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["post"], url_path="export-samples", url_name="export-samples")
    def export_samples(self, request: Request, pk=None) -> Response:
        """Store the selected texts as text samples (origin ``breaker``); idempotent."""
        return Response({"samples": save_selected_as_samples(self.get_object())})

    def _runs_to_send(self, run: BreakerRun, whole_comparison: Any) -> list[BreakerRun]:
        if not isinstance(whole_comparison, bool):
            raise SendError("comparison", "comparison must be true or false")
        if not whole_comparison:
            return [run]
        if not run.comparison:
            raise SendError("comparison", "this run is not part of a comparison")
        return comparison_rows(run.comparison)

    @extend_schema(
        request=SendSerializer, responses={201: SentSerializer, 400: JobConfigErrorSerializer}
    )
    @action(
        detail=True, methods=["post"], url_path="send-to-annotation", url_name="send-to-annotation"
    )
    def send_to_annotation(self, request: Request, pk=None) -> Response:
        """A new ESA, MQM, ESA+MQM or translation campaign with the selected texts."""
        run = self.get_object()
        data = request.data if isinstance(request.data, dict) else {}
        try:
            runs = self._runs_to_send(run, data.get("comparison", False))
            campaign = send_to_annotation(
                runs,
                protocol=data.get("protocol", ""),
                overlap=data.get("overlap", 1),
                created_by=request.user,
            )
        except SendError as exc:
            return Response(field_errors(exc.errors), status=status.HTTP_400_BAD_REQUEST)
        page = reverse("annotation:campaign_detail", args=[campaign.pk])
        body = {
            "campaign": campaign.pk,
            "name": campaign.name,
            "protocol": campaign.protocol,
            "items": campaign.items.count(),
            "runs": [r.pk for r in runs],
            "page": request.build_absolute_uri(page),
        }
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get"])
    def humans(self, request: Request, pk=None) -> Response:
        """Human results of the run's selected texts per translator (seed 001 Tables 6 and
        11) and QE calibrated on them."""
        run = self.get_object()
        report = human_report([run])
        calibration = calibration_report([run])
        rows = [
            {
                "method": row.run.method,
                "system": row.system,
                "texts": row.texts,
                "mean_qe": row.mean_qe,
                "mean_human_score": row.mean_human,
                "judgments": row.judgments,
                "non_scorable": row.non_scorable,
                "non_scorable_rate": row.non_scorable_rate,
                "mqm_categories": dict(row.categories),
            }
            for row in report["rows"]
        ]
        return Response(
            {
                "rows": rows,
                "calibration": {
                    "n_pairs": calibration.n_pairs,
                    "before": calibration.before,
                    "after_cross_validated": {
                        **calibration.after,
                        "folds": calibration.folds,
                        "method": calibration.validation,
                    },
                    "map": calibration.mapping.to_dict(),
                },
            }
        )
