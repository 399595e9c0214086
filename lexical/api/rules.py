"""REST API of rule generation (seed 004 §3): create rule jobs (one per engine), list and read
them with their per-concept outcomes, cancel them, and list rules per concept. Staff only; a
refused configuration is a 400 with ``errors`` keyed by field, and nothing is written."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api_jobs import JobSerializer, JobViewSet
from core.api_links import PageField
from lexical.models import Rule, RuleJob, RuleJobConcept
from lexical.rules.selectors import job_concepts, job_for_user, jobs_for_user, rules_for_user
from lexical.rules.services import JobStateError, cancel_job, start_rule_jobs


class RuleJobSerializer(JobSerializer):
    concepts_failed = serializers.IntegerField(read_only=True)
    page = PageField("lexical:rule_job")

    class Meta:
        model = RuleJob
        fields = [
            "id", "engine", "status", "error", "source", "mining_job", "selection", "params",
            "round_index", "items_done", "items_total", "concepts_failed", "progress", "cost",
            "created_at", "started_at", "finished_at", "page",
        ]  # fmt: skip
        read_only_fields = fields


class RuleJobConceptSerializer(serializers.ModelSerializer):
    lemma = serializers.CharField(source="concept.lemma", read_only=True)

    class Meta:
        model = RuleJobConcept
        fields = ["concept", "lemma", "position", "status", "attempts", "error", "finished_at"]
        read_only_fields = fields


class RuleJobDetailSerializer(RuleJobSerializer):
    concepts = serializers.SerializerMethodField(help_text="Each concept's outcome, in order.")

    class Meta(RuleJobSerializer.Meta):
        fields = [*RuleJobSerializer.Meta.fields, "concepts"]
        read_only_fields = fields

    def get_concepts(self, job: RuleJob) -> list[dict]:
        return list(RuleJobConceptSerializer(job_concepts(job), many=True).data)


class RuleConfigSerializer(serializers.Serializer):
    """A rule job configuration (documented here; validated by ``lexical.rules.services``)."""

    engines = serializers.ListField(child=serializers.CharField(), help_text="One job each.")
    mining_job = serializers.IntegerField(required=False, help_text="Its active concepts.")
    selection = serializers.IntegerField(required=False, help_text="Its active concepts.")
    concepts = serializers.ListField(child=serializers.IntegerField(), required=False)
    params = serializers.DictField(
        required=False,
        help_text="sentences_per_variation (50), max_sentence_tokens (50), max_reasks (2), "
        "system_prompt_in_user (false).",
    )


class RuleSerializer(serializers.ModelSerializer):
    variation_label = serializers.CharField(source="variation.label", read_only=True)

    class Meta:
        model = Rule
        fields = [
            "id", "job", "concept", "variation", "variation_label", "generator", "text",
            "validation_status", "created_at",
        ]  # fmt: skip
        read_only_fields = fields


class RuleJobViewSet(JobViewSet):
    """Rule generation jobs, one per generator engine (staff only)."""

    # The one job kind whose create also takes form bodies (the API's default parsers), as it
    # always has; the other kinds are JSON only (JobViewSet).
    parser_classes = list(APIView.parser_classes)
    list_serializer = RuleJobSerializer
    detail_serializer = RuleJobDetailSerializer
    objects_for_user = staticmethod(jobs_for_user)
    object_for_user = staticmethod(job_for_user)
    cancel_job = staticmethod(cancel_job)
    state_error = JobStateError

    @extend_schema(
        request=RuleConfigSerializer,
        responses={201: RuleJobSerializer(many=True), 400: OpenApiResponse(description="errors")},
    )
    def create(self, request: Request) -> Response:
        """Start one rule job per engine; answers the created jobs."""
        context = self.get_serializer_context()
        return self.started(
            start_rule_jobs, lambda jobs: RuleJobSerializer(jobs, many=True, context=context).data
        )


@extend_schema(
    parameters=[
        OpenApiParameter("concept", int, required=True, description="The concept's id."),
        OpenApiParameter("generator", str, description="Only this generator engine's rules."),
        OpenApiParameter("job", int, description="Only this job's rules."),
    ]
)
class RuleViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Rules of one concept, every generator's (staff only): ``?concept=ID``."""

    permission_classes = [IsAdminUser]
    serializer_class = RuleSerializer
    queryset = Rule.objects.none()  # for the schema; requests use get_queryset

    def _id(self, name: str, required: bool = False) -> int | None:
        raw = self.request.query_params.get(name)
        if raw is None or raw == "":
            if required:
                raise ValidationError({name: "required: a concept id"})
            return None
        if not raw.isdigit() or len(raw) > 12:
            raise ValidationError({name: "must be an id"})
        return int(raw)

    def get_queryset(self):
        rules = rules_for_user(self.request.user).filter(concept_id=self._id("concept", True))
        job = self._id("job")
        if job is not None:
            rules = rules.filter(job_id=job)
        generator = self.request.query_params.get("generator")
        if generator:
            rules = rules.filter(generator=generator[:100])
        return rules.order_by("-variation__count", "variation_id", "generator", "id")
