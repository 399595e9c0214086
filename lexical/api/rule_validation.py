"""REST API of rule-validation studies (seed 004 §2.2–2.3): create a study (its annotation
campaign with one questionnaire item per concept), list them, and read one with its results
(Tables 1, 3, 4–6). Reading a study writes the rules' verdicts back, as its page does. Staff
only; a refused study is a 400 with ``errors`` keyed by field, and nothing is written."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.api.serializers import FamilyAgreementSerializer
from core.api_errors import field_errors
from core.api_links import PageField
from core.api_viewsets import ScopedReadViewSet
from lexical.models import RuleValidationStudy
from lexical.studies.rule_validation.selectors import (
    studies_for_user,
    study_for_user,
    study_results,
)
from lexical.studies.rule_validation.services import (
    StudyConfigError,
    apply_rule_verdicts,
    create_study,
)


class RuleValidationStudySerializer(serializers.ModelSerializer):
    campaign_name = serializers.CharField(source="campaign.name", read_only=True)
    page = PageField("lexical:rule_validation")

    class Meta:
        model = RuleValidationStudy
        fields = [
            "id", "campaign", "campaign_name", "mining_job", "src_lang", "tgt_lang",
            "rule_jobs", "params", "created_at", "page",
        ]  # fmt: skip
        read_only_fields = fields


class RuleValidationShareSerializer(serializers.Serializer):
    micro = serializers.FloatField(allow_null=True, help_text="Over individual judgements.")
    micro_positive = serializers.IntegerField()
    micro_total = serializers.IntegerField()
    majority = serializers.FloatField(allow_null=True, help_text="Over majority-decided units.")
    majority_positive = serializers.IntegerField()
    majority_total = serializers.IntegerField()
    ties = serializers.IntegerField(help_text="Complete units whose vote was tied (left out).")


class RuleValidationResultsSerializer(serializers.Serializer):
    items_total = serializers.IntegerField()
    items_complete = serializers.IntegerField()
    annotators_counted = serializers.IntegerField(help_text="QC verdict pass.")
    annotators_excluded = serializers.IntegerField(help_text="QC verdict fail or pending.")
    overlap = serializers.IntegerField()
    precision = RuleValidationShareSerializer(help_text="Table 1.")
    recall = RuleValidationShareSerializer(help_text="Table 1.")
    rules = serializers.DictField(
        child=RuleValidationShareSerializer(), help_text="Table 3, by generator."
    )
    agreement = serializers.DictField(
        child=FamilyAgreementSerializer(), help_text="Tables 4–6: rules, precision, recall."
    )


class RuleValidationStudyDetailSerializer(RuleValidationStudySerializer):
    results = serializers.SerializerMethodField()

    class Meta(RuleValidationStudySerializer.Meta):
        fields = [*RuleValidationStudySerializer.Meta.fields, "results"]
        read_only_fields = fields

    @extend_schema_field(RuleValidationResultsSerializer)
    def get_results(self, study: RuleValidationStudy) -> dict:
        return study_results(study).to_dict()


class RuleValidationConfigSerializer(serializers.Serializer):
    """A study configuration (documented here; validated by the service)."""

    name = serializers.CharField(help_text="The annotation campaign's name (unique).")
    rule_jobs = serializers.ListField(child=serializers.IntegerField(), help_text="Generators.")
    mining_job = serializers.IntegerField(required=False, help_text="Its active concepts.")
    tgt_lang = serializers.CharField(
        required=False, help_text="Without mining_job: every active concept of this language."
    )
    max_concepts = serializers.IntegerField(required=False, help_text="Sample at most this many.")
    seed = serializers.IntegerField(required=False, help_text="Sample and order (0).")
    overlap = serializers.IntegerField(required=False, help_text="Annotators per concept (3).")
    attention_checks = serializers.IntegerField(required=False, help_text="Check items (2).")
    native_speakers = serializers.BooleanField(
        required=False, help_text="Only native speakers of the target language may join (true)."
    )
    one_study_per_person = serializers.BooleanField(
        required=False,
        help_text="Put the campaign in the language's exclusive group (false): a person takes "
        "only one study of this language.",
    )


class RuleValidationStudyViewSet(ScopedReadViewSet):
    """Rule-validation studies (staff only); a study's detail carries its results."""

    permission_classes = [IsAdminUser]
    list_serializer = RuleValidationStudySerializer
    detail_serializer = RuleValidationStudyDetailSerializer
    objects_for_user = staticmethod(studies_for_user)
    object_for_user = staticmethod(study_for_user)

    def get_object(self) -> RuleValidationStudy:
        study = super().get_object()
        apply_rule_verdicts(study)
        return study

    @extend_schema(
        request=RuleValidationConfigSerializer,
        responses={
            201: RuleValidationStudySerializer,
            400: OpenApiResponse(description="errors keyed by field; nothing was created"),
        },
    )
    def create(self, request: Request) -> Response:
        """Create a study and its annotation campaign; answers the study."""
        try:
            study = create_study(request.data, created_by=request.user)
        except StudyConfigError as exc:
            return Response(field_errors(exc.errors), status=status.HTTP_400_BAD_REQUEST)
        data = RuleValidationStudySerializer(study, context=self.get_serializer_context()).data
        return Response(data, status=status.HTTP_201_CREATED)
