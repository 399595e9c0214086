"""REST API for lexical-selection studies (seed 004 §2.3): create a study from an example
selection, list studies with their Table 2 row, retrieve one with its per-concept and per-item
results. Staff only; a refused study is a 400 with ``errors`` keyed by field, nothing written."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.models import Campaign
from core.api_errors import field_errors
from core.api_parsers import StrictJSONParser
from core.api_viewsets import ScopedReadViewSet
from lexical.concepts.selectors import selections_for_user
from lexical.models import SelectionStudy
from lexical.studies.selection_study import selectors
from lexical.studies.selection_study.results import ItemOutcome
from lexical.studies.selection_study.services import (
    DEFAULT_CONFIDENCE_LABELS,
    DEFAULT_OVERLAP,
    MAX_ATTENTION_CHECKS,
    SelectionStudyError,
    StudyParams,
    create_selection_study,
)


class SelectionStudyTable2Serializer(serializers.Serializer):
    language = serializers.CharField()
    pool_size = serializers.IntegerField(help_text="Candidate examples of the study's concepts.")
    items = serializers.IntegerField(help_text="Sentences in the study.")
    complete = serializers.IntegerField(help_text="Sentences with all their judgments.")
    sufficient = serializers.IntegerField()
    ties = serializers.IntegerField()
    sufficient_share = serializers.FloatField(
        allow_null=True, help_text="sufficient / complete (0–1); null before any is complete."
    )
    dataset_size = serializers.IntegerField()


class SelectionStudyConceptSerializer(serializers.Serializer):
    concept_id = serializers.IntegerField(allow_null=True)
    concept = serializers.CharField()
    items = serializers.IntegerField()
    complete = serializers.IntegerField()
    sufficient = serializers.IntegerField()
    sufficient_share = serializers.FloatField(allow_null=True)
    mean_agreement = serializers.FloatField(allow_null=True)


class SelectionStudyItemSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    example = serializers.IntegerField(allow_null=True)
    concept_id = serializers.IntegerField(allow_null=True)
    concept = serializers.CharField()
    source = serializers.CharField()  # type: ignore[assignment]  # a field named "source"
    source_highlight = serializers.ListField(child=serializers.IntegerField(), allow_null=True)
    choices = serializers.ListField(child=serializers.CharField())
    attested = serializers.CharField(allow_null=True)
    votes = serializers.DictField(
        child=serializers.IntegerField(), help_text="Label → votes of passing annotators."
    )
    submitted = serializers.IntegerField()
    complete = serializers.BooleanField()
    majority = serializers.CharField(allow_null=True)
    tie = serializers.BooleanField()
    tie_broken = serializers.BooleanField()
    agreement = serializers.FloatField(allow_null=True)
    sufficient = serializers.BooleanField(allow_null=True, help_text="null while not complete.")


def item_record(outcome: ItemOutcome) -> dict:
    v = outcome.votes
    return {
        "item": v.item_id,
        "example": v.example_id,
        "concept_id": v.concept_id,
        "concept": v.concept,
        "source": v.source,
        "source_highlight": list(v.highlight) if v.highlight else None,
        "choices": list(v.choices),
        "attested": v.attested,
        "votes": outcome.counts,
        "submitted": v.n_submitted,
        "complete": v.complete,
        "majority": outcome.majority,
        "tie": outcome.tie,
        "tie_broken": outcome.tie_broken,
        "agreement": outcome.agreement,
        "sufficient": outcome.sufficient,
    }


class SelectionStudySerializer(serializers.ModelSerializer):
    name = serializers.CharField(source="campaign.name", read_only=True)
    overlap = serializers.IntegerField(source="campaign.overlap", read_only=True)
    tie_rule = serializers.CharField(source="campaign.tie_rule", read_only=True)
    table2 = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()

    class Meta:
        model = SelectionStudy
        fields = [
            "id", "name", "campaign", "selection", "overlap", "tie_rule", "params",
            "created_at", "table2", "links",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema(responses=SelectionStudyTable2Serializer)
    def get_table2(self, study: SelectionStudy) -> dict:
        return selectors.study_results(study).table2.to_dict()

    def get_links(self, study: SelectionStudy) -> dict[str, str]:
        request = self.context["request"]
        return {
            "page": request.build_absolute_uri(
                reverse("lexical:selection_study_detail", args=[study.pk])
            ),
            "dashboard": request.build_absolute_uri(
                reverse("annotation:dashboard_campaign", args=[study.campaign_id])
            ),
        }


class SelectionStudyDetailSerializer(SelectionStudySerializer):
    concepts = serializers.SerializerMethodField()
    results = serializers.SerializerMethodField()

    class Meta(SelectionStudySerializer.Meta):
        fields = [*SelectionStudySerializer.Meta.fields, "concepts", "results"]
        read_only_fields = fields

    @extend_schema(responses=SelectionStudyConceptSerializer(many=True))
    def get_concepts(self, study: SelectionStudy) -> list[dict]:
        return [row.to_dict() for row in self._results(study).concepts]

    @extend_schema(responses=SelectionStudyItemSerializer(many=True))
    def get_results(self, study: SelectionStudy) -> list[dict]:
        return [item_record(o) for o in self._results(study).outcomes]

    def _results(self, study: SelectionStudy) -> selectors.StudyResults:
        # One recomputation per response, shared by the fields that read it.
        cache = self.context.setdefault("study_results", {})
        if study.pk not in cache:
            cache[study.pk] = selectors.study_results(study)
        return cache[study.pk]

    @extend_schema(responses=SelectionStudyTable2Serializer)
    def get_table2(self, study: SelectionStudy) -> dict:
        return self._results(study).table2.to_dict()


class SelectionStudyCreateSerializer(serializers.Serializer):
    selection = serializers.IntegerField(help_text="An example selection's id.")
    name = serializers.CharField(max_length=200, help_text="The campaign's name (unused).")
    overlap = serializers.IntegerField(
        required=False, default=DEFAULT_OVERLAP, min_value=1, max_value=100
    )
    tie_rule = serializers.ChoiceField(
        choices=Campaign.TieRule.choices, required=False, default=Campaign.TieRule.NO_MAJORITY
    )
    confidence_labels = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        default=list(DEFAULT_CONFIDENCE_LABELS),
        help_text="Least to most confident; default seed 004 Fig. 4's wording.",
    )
    attention_checks = serializers.IntegerField(
        required=False, default=0, min_value=0, max_value=MAX_ATTENTION_CHECKS
    )
    instructions = serializers.CharField(
        required=False, default="", allow_blank=True, max_length=5000
    )
    native_speakers = serializers.BooleanField(
        required=False,
        default=True,
        help_text="Only native speakers of the target language may join (true).",
    )
    one_study_per_person = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Put the campaign in the language's exclusive group: a person takes only one "
        "study of this language.",
    )


class SelectionStudyErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    # A field named "errors": the metaclass pops declared fields, .errors stays the property.
    # Absent when the body itself is not readable JSON (the strict parser's 400).
    errors = serializers.DictField(child=serializers.CharField(), required=False)  # type: ignore[assignment]


class SelectionStudyViewSet(ScopedReadViewSet):
    """Lexical-selection studies with seed 004 Table 2 (staff only)."""

    permission_classes = [IsAdminUser]
    # JSON only: a configuration is a nested object, which a form encoding cannot carry.
    parser_classes = [StrictJSONParser]
    list_serializer = SelectionStudySerializer
    detail_serializer = SelectionStudyDetailSerializer
    objects_for_user = staticmethod(selectors.studies_for_user)
    object_for_user = staticmethod(selectors.study_for_user)

    def get_serializer_class(self):
        # Only one study's detail carries the results; other actions (create, OPTIONS) describe
        # the list's fields.
        return self.detail_serializer if self.action == "retrieve" else self.list_serializer

    @extend_schema(
        request=SelectionStudyCreateSerializer,
        responses={201: SelectionStudyDetailSerializer, 400: SelectionStudyErrorSerializer},
    )
    def create(self, request: Request) -> Response:
        """Create the study (a choice campaign) of an example selection."""
        given = SelectionStudyCreateSerializer(data=request.data)
        if not given.is_valid():
            errors = {k: " ".join(map(str, v)) for k, v in given.errors.items()}
            return Response(field_errors(errors), status=status.HTTP_400_BAD_REQUEST)
        data = given.validated_data
        selection = selections_for_user(request.user).filter(pk=data["selection"]).first()
        if selection is None:
            return Response(
                field_errors({"selection": f"no example selection #{data['selection']}"}),
                status=status.HTTP_400_BAD_REQUEST,
            )
        params = StudyParams(
            name=data["name"],
            overlap=data["overlap"],
            tie_rule=data["tie_rule"],
            confidence_labels=tuple(data["confidence_labels"]),
            attention_checks=data["attention_checks"],
            instructions=data["instructions"],
            native_speakers=data["native_speakers"],
            one_study_per_person=data["one_study_per_person"],
        )
        try:
            study = create_selection_study(selection, params, created_by=request.user)
        except SelectionStudyError as exc:
            return Response(
                field_errors({exc.field or "study": str(exc)}), status=status.HTTP_400_BAD_REQUEST
            )
        body = SelectionStudyDetailSerializer(study, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)
