"""REST API for MT-breaker runs (seed 001): create from a config (or compare methods), list,
retrieve, pause/resume/cancel, chains, export. Staff only, like the pages; every run is looked
up through ``search.breaker.selectors``; a refused configuration is a 400 with ``errors``."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from config.api_parsers import StrictJSONParser
from search.api.runs import ControlErrorSerializer
from search.breaker.config import BreakerConfigError, create_comparison, create_run
from search.breaker.records import chain_record, jsonl_response, save_selected_as_samples
from search.breaker.selectors import run_for_user, run_rows
from search.breaker.services import RunStateError, cancel_run, pause_run, resume_run
from search.models import BreakerChain, BreakerRun, BreakerStep


class BreakerRunSerializer(serializers.ModelSerializer):
    status = serializers.CharField(
        read_only=True, help_text=f"One of: {', '.join(BreakerRun.Status.values)}."
    )
    method = serializers.CharField(read_only=True)
    llm_engine: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="name", read_only=True, allow_null=True
    )
    progress = serializers.FloatField(read_only=True)
    cost = serializers.FloatField(read_only=True)
    budget_money = serializers.FloatField(read_only=True, allow_null=True)
    links = serializers.SerializerMethodField()

    class Meta:
        model = BreakerRun
        fields = [
            "id", "name", "comparison", "method", "status", "error", "llm_engine", "targets",
            "qe_engines", "src_lang", "tgt_lang", "n_steps", "k_generations", "max_edit_share",
            "target_words", "seed", "seeds_from", "budget_money", "round_index", "steps_done",
            "steps_total", "progress", "cost", "created_at", "started_at", "finished_at",
            "links",
        ]  # fmt: skip
        read_only_fields = fields

    def get_links(self, run: BreakerRun) -> dict[str, str]:
        request = self.context["request"]
        names = {
            "page": "search:breaker_detail",
            "chains": "breaker-run-chains",
            "export": "breaker-run-export",
        }
        return {
            key: request.build_absolute_uri(reverse(name, args=[run.pk]))
            for key, name in names.items()
        }


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


class ConfigErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Every problem on one line.")
    # A field named "errors": the metaclass pops declared fields, .errors stays the property.
    errors = serializers.DictField(  # type: ignore[assignment]
        child=serializers.CharField(),
        required=False,
        help_text="Field -> message; absent when the body itself is not readable JSON.",
    )


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


CONTROL = {
    200: BreakerRunDetailSerializer,
    409: OpenApiResponse(ControlErrorSerializer, description="not possible in the run's state"),
}


class BreakerRunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """MT-breaker runs (staff only). Controls act at the end of the round in flight."""

    permission_classes = [IsAdminUser]
    queryset = BreakerRun.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self):
        return run_rows(self.request.user)

    def get_object(self) -> BreakerRun:
        return run_for_user(self.request.user, self.kwargs["pk"])

    def get_serializer_class(self):
        return BreakerRunSerializer if self.action == "list" else BreakerRunDetailSerializer

    def get_parsers(self):
        return [StrictJSONParser()]  # a configuration is a nested JSON object

    def _data(self, run: BreakerRun) -> dict:
        return BreakerRunDetailSerializer(run, context=self.get_serializer_context()).data

    @extend_schema(
        request=BreakerConfigSerializer,
        responses={201: BreakerRunDetailSerializer(many=True), 400: ConfigErrorSerializer},
    )
    def create(self, request: Request) -> Response:
        """Start a run from its configuration (or, with ``methods``, one per method): a list."""
        try:
            if isinstance(request.data, dict) and "methods" in request.data:
                runs = create_comparison(request.data, created_by=request.user)
            else:
                runs = [create_run(request.data, created_by=request.user)]
        except BreakerConfigError as exc:
            return Response(
                {"detail": str(exc), "errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST
            )
        data = [self._data(run_for_user(request.user, run.pk)) for run in runs]
        return Response(data, status=status.HTTP_201_CREATED)

    def _control(self, service) -> Response:
        try:
            run = service(self.get_object())
        except RunStateError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(self._data(run_for_user(self.request.user, run.pk)))

    @extend_schema(request=None, responses=CONTROL)
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk=None) -> Response:
        return self._control(pause_run)

    @extend_schema(request=None, responses=CONTROL)
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk=None) -> Response:
        return self._control(resume_run)

    @extend_schema(request=None, responses=CONTROL)
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk=None) -> Response:
        return self._control(cancel_run)

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
