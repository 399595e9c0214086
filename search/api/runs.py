"""REST API for bandit search runs (seed 000): list, create, control, results and exports.

Staff only, like the pages; every run is looked up through ``search.runs.selectors``; a run is
created from the same configuration ``run_search`` reads (``search/run_config.py``), and a
refused configuration is a 400 with ``errors`` (field → message), nothing written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_jobs import JobSerializer, RoundJobViewSet, start_schema
from core.api_links import LinksField
from search.models import Pull, SearchRun, TopicTree
from search.runs.records import pull_record, pulls_jsonl_response, top_k_json_response
from search.runs.selectors import run_for_user, run_rows, top_topics
from search.runs.services import RunStateError, cancel_run, pause_run, resume_run, start_search_run

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from engines.models import Engine

# --- Serializers ---------------------------------------------------------------------------


class SearchRunSerializer(JobSerializer):
    """A run's settings, state and links (list and retrieve)."""

    tree: serializers.SlugRelatedField[TopicTree] = serializers.SlugRelatedField(
        slug_field="name", read_only=True, allow_null=True
    )
    sampler_engine: serializers.SlugRelatedField[Engine] = serializers.SlugRelatedField(
        slug_field="name", read_only=True, allow_null=True
    )
    difficulty_engine: serializers.SlugRelatedField[Engine] = serializers.SlugRelatedField(
        slug_field="name", read_only=True
    )
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    budget_money = serializers.FloatField(read_only=True, allow_null=True)
    links = LinksField(
        page="search:run_detail",
        pulls_jsonl="search:run_export_pulls",
        top_k_json="search:run_export_top_k",
        top_k="search-run-top-k",
        pulls="search-run-pulls",
    )

    class Meta:
        model = SearchRun
        fields = [
            "id", "name", "status", "error", "tree", "n_topics", "sampler", "sampler_engine",
            "difficulty_engine", "src_lang", "tgt_lang", "algorithm", "params", "budget_pulls",
            "budget_money", "k", "seed", "batch_size", "human_mode", "human_settings",
            "campaign", "round_index", "pulls_done", "progress", "cost", "worker_memory_mb",
            "created_by", "created_at", "started_at", "finished_at", "links",
        ]  # fmt: skip
        read_only_fields = fields


class SearchRunDetailSerializer(SearchRunSerializer):
    """One run with its progress curve, current result and calibration report."""

    class Meta(SearchRunSerializer.Meta):
        fields = [*SearchRunSerializer.Meta.fields, "history", "result", "calibration"]
        read_only_fields = fields


class RunConfigSerializer(serializers.Serializer):
    """The configuration of a new run (documented here; validated by ``validate_config``)."""

    name = serializers.CharField()
    tree = serializers.CharField(required=False, help_text="Topic tree name or id.")
    sampler = serializers.ChoiceField(choices=SearchRun.Sampler.choices, required=False)
    sampler_engine = serializers.CharField(required=False, help_text="Chat engine (llm).")
    difficulty_engine = serializers.JSONField(
        help_text="Engine name, or an engine spec object created when absent."
    )
    src_lang = serializers.CharField(required=False)
    tgt_lang = serializers.CharField(required=False)
    algorithm = serializers.CharField(required=False, help_text='"default" or a policy name.')
    params = serializers.DictField(required=False)
    budget_pulls = serializers.IntegerField(required=False)
    budget_money = serializers.FloatField(required=False)
    k = serializers.IntegerField(required=False)
    seed = serializers.IntegerField(required=False)
    batch_size = serializers.IntegerField(required=False)
    human_mode = serializers.ChoiceField(choices=SearchRun.HumanMode.choices, required=False)
    human_settings = serializers.DictField(required=False)


class TopTopicSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    arm = serializers.IntegerField()
    topic_id = serializers.IntegerField(allow_null=True, source="topic.pk", default=None)
    name = serializers.CharField()
    mean = serializers.FloatField(allow_null=True)
    count = serializers.IntegerField()
    posterior_mean = serializers.FloatField(allow_null=True)
    lower = serializers.FloatField(allow_null=True)
    upper = serializers.FloatField(allow_null=True)
    true_mean = serializers.FloatField(allow_null=True)


class PullRecordSerializer(serializers.Serializer):
    """A pull as the JSONL export writes it (documentation of ``pull_record``)."""

    id = serializers.IntegerField()
    round = serializers.IntegerField()
    slot = serializers.IntegerField()
    arm = serializers.IntegerField()
    topic_id = serializers.IntegerField(allow_null=True)
    topic = serializers.CharField(allow_null=True)
    text = serializers.CharField()
    source_url = serializers.CharField()
    origin = serializers.CharField()
    translations = serializers.DictField(child=serializers.CharField())
    scores = serializers.ListField(child=serializers.DictField())
    automatic_difficulty = serializers.FloatField()
    human_difficulty = serializers.FloatField(allow_null=True)
    human_scores = serializers.DictField(child=serializers.FloatField())
    human_status = serializers.CharField()
    difficulty = serializers.FloatField()


# --- Views ---------------------------------------------------------------------------------

ARM_PARAMETER = OpenApiParameter(
    "arm", OpenApiTypes.INT, description="Only the pulls of this arm (topic index)."
)


class SearchRunViewSet(RoundJobViewSet):
    """Search runs (staff only). Pause, resume and cancel take effect at the end of the round
    in flight; the response shows the run as it is when the request returns."""

    list_serializer = SearchRunSerializer
    detail_serializer = SearchRunDetailSerializer
    object_for_user = staticmethod(run_for_user)
    cancel_job = staticmethod(cancel_run)
    pause_job = staticmethod(pause_run)
    resume_job = staticmethod(resume_run)
    state_error = RunStateError
    reread_detail = True

    @staticmethod
    def objects_for_user(user):
        return run_rows(user).select_related("sampler_engine")

    @start_schema(RunConfigSerializer, SearchRunDetailSerializer)
    def create(self, request: Request) -> Response:
        """Start a run from its configuration (the JSON ``run_search`` reads); queued at once."""
        return self.started(start_search_run)

    @extend_schema(responses=TopTopicSerializer(many=True))
    @action(
        detail=True, methods=["get"], url_path="top-k", url_name="top-k", pagination_class=None
    )  # a short ranked list, never paginated
    def top_k(self, request: Request, pk=None) -> Response:
        """The current recommendation, best first, with estimates and 95 % intervals."""
        rows = top_topics(self.get_object())
        return Response(TopTopicSerializer(rows, many=True).data)

    @extend_schema(parameters=[ARM_PARAMETER], responses=PullRecordSerializer(many=True))
    @action(detail=True, methods=["get"])
    def pulls(self, request: Request, pk=None) -> Response:
        """The run's pulls in order (paginated), optionally of one arm."""
        run = self.get_object()
        pulls = Pull.objects.filter(run=run).select_related("topic", "sample")
        arm = request.query_params.get("arm", "")
        if arm.isdigit():
            pulls = pulls.filter(arm=int(arm))
        page = self.paginate_queryset(pulls.order_by("round_index", "slot"))
        assert page is not None  # DEFAULT_PAGINATION_CLASS is set
        return self.get_paginated_response([pull_record(run, pull) for pull in page])

    @extend_schema(responses={(200, "application/x-ndjson"): OpenApiTypes.STR})
    @action(detail=True, methods=["get"], url_path="export/pulls", url_name="export-pulls")
    def export_pulls(self, request: Request, pk=None) -> StreamingHttpResponse:
        """Every pull as JSON Lines, streamed (the page's export)."""
        return pulls_jsonl_response(self.get_object())

    @extend_schema(responses={(200, "application/json"): OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get"], url_path="export/top-k", url_name="export-top-k")
    def export_top_k(self, request: Request, pk=None) -> HttpResponse:
        """Configuration, summary and the top-k topics with their hardest texts."""
        return top_k_json_response(self.get_object())
