"""REST API for concepts (browse, admin edits) and example selections (staff only).

Edits go through ``lexical.concepts.services``, like the pages; a refused edit is a 400 with
``errors`` keyed by the field at fault, and nothing changes."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_errors import field_errors
from core.api_fields import optional_text
from core.api_links import PageField
from core.api_parsers import StrictJSONParser
from core.api_viewsets import ScopedReadViewSet
from lexical.concepts import services
from lexical.concepts.forms import ConceptFilterForm
from lexical.concepts.selection import SelectionParams
from lexical.concepts.selectors import (
    concept_for_user,
    concepts_for_user,
    filter_concepts,
    selection_for_user,
    selections_for_user,
)
from lexical.models import Concept, ConceptExample, ExampleSelection, SelectedExample, Variation

MAX_ID = 2**63 - 1
EXAMPLES_PER_VARIATION = 5


class VariationSerializer(serializers.ModelSerializer):
    # A field named "label": the metaclass pops declared fields, Field.label stays the attribute.
    label = serializers.CharField(read_only=True)  # type: ignore[assignment]

    class Meta:
        model = Variation
        fields = ["id", "lemma", "label", "surface_forms", "count", "dropped"]
        read_only_fields = fields


class ExampleSerializer(serializers.ModelSerializer):
    source_text = serializers.CharField(read_only=True)
    target_text = serializers.CharField(read_only=True)
    pair_position = serializers.IntegerField(source="pair.position", read_only=True, default=None)

    class Meta:
        model = ConceptExample
        fields = [
            "id", "variation", "source_text", "target_text", "src_start", "src_end",
            "tgt_start", "tgt_end", "src_tokens", "pair_position",
        ]  # fmt: skip
        read_only_fields = fields


class ConceptSerializer(serializers.ModelSerializer):
    variations = serializers.SerializerMethodField()
    page = PageField("lexical:concept_detail")

    class Meta:
        model = Concept
        fields = [
            "id", "mining_job", "origin", "src_lang", "tgt_lang", "lemma", "pos", "status",
            "entropy", "total_count", "note", "variations", "created_at", "page",
        ]  # fmt: skip
        read_only_fields = fields

    def get_variations(self, concept: Concept) -> Any:
        return VariationSerializer(concept.variations.all(), many=True).data


class ConceptDetailSerializer(ConceptSerializer):
    examples = serializers.SerializerMethodField(
        help_text="The first examples of each variation (longest source first)."
    )

    class Meta(ConceptSerializer.Meta):
        fields = [*ConceptSerializer.Meta.fields, "examples"]
        read_only_fields = fields

    def get_examples(self, concept: Concept) -> Any:
        rows: list[ConceptExample] = []
        for variation in concept.variations.all():
            examples = variation.examples.select_related("pair").order_by("-src_tokens", "id")
            rows.extend(examples[:EXAMPLES_PER_VARIATION])
        return ExampleSerializer(rows, many=True).data


class MergeSerializer(serializers.Serializer):
    keep = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    absorb = serializers.IntegerField(min_value=1, max_value=MAX_ID)


class SplitSerializer(serializers.Serializer):
    variation = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    surface_forms = serializers.ListField(
        child=serializers.CharField(max_length=200), min_length=1, max_length=200
    )
    lemma = optional_text(max_length=200)


class VariationRefSerializer(serializers.Serializer):
    variation = serializers.IntegerField(min_value=1, max_value=MAX_ID)


class RejectSerializer(serializers.Serializer):
    note = optional_text(max_length=2000)


_FILTERS = [
    OpenApiParameter("tgt_lang", str),
    OpenApiParameter("mining_job", int),
    OpenApiParameter("status", str, enum=list(Concept.Status.values)),
    OpenApiParameter("pos", str),
    OpenApiParameter("q", str, description="Lemma (of the concept or a variation) contains."),
]


class ConceptViewSet(ScopedReadViewSet):
    """Concepts with their variations (staff only); admin edits as actions."""

    permission_classes = [IsAdminUser]
    list_serializer = ConceptSerializer
    detail_serializer = ConceptDetailSerializer
    objects_for_user = staticmethod(concepts_for_user)
    object_for_user = staticmethod(concept_for_user)

    def get_queryset(self):
        form = ConceptFilterForm(self.request.query_params)
        if self.request.query_params and not form.is_valid():
            raise ValidationError(form.errors.get_json_data())
        concepts = filter_concepts(super().get_queryset(), form.filters())
        return concepts.prefetch_related("variations")

    @extend_schema(parameters=_FILTERS)
    def list(self, request: Request, *args, **kwargs) -> Response:
        return super().list(request, *args, **kwargs)

    def _edit(self, request: Request, body_class, apply) -> Response:
        concept = self.get_object()
        body = body_class(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            apply(concept, body.validated_data)
        except services.ConceptEditError as exc:
            field = exc.field or "non_field_errors"
            return Response(field_errors({field: [str(exc)]}), status=status.HTTP_400_BAD_REQUEST)
        concept.refresh_from_db()
        context = self.get_serializer_context()
        return Response(ConceptDetailSerializer(concept, context=context).data)

    @extend_schema(request=MergeSerializer, responses={200: ConceptDetailSerializer})
    @action(detail=True, methods=["post"])
    def merge(self, request: Request, pk: int) -> Response:
        """Merge variation ``absorb`` into ``keep``: counts add, forms unite, examples move."""
        return self._edit(
            request,
            MergeSerializer,
            lambda c, d: services.merge_variations(c, d["keep"], d["absorb"]),
        )

    @extend_schema(request=SplitSerializer, responses={200: ConceptDetailSerializer})
    @action(detail=True, methods=["post"])
    def split(self, request: Request, pk: int) -> Response:
        """Move surface forms of a variation (and their examples) into a new variation."""
        return self._edit(
            request,
            SplitSerializer,
            lambda c, d: services.split_variation(
                c, d["variation"], d["surface_forms"], d["lemma"]
            ),
        )

    @extend_schema(request=VariationRefSerializer, responses={200: ConceptDetailSerializer})
    @action(detail=True, methods=["post"], url_path="drop-variation")
    def drop_variation(self, request: Request, pk: int) -> Response:
        return self._edit(
            request,
            VariationRefSerializer,
            lambda c, d: services.drop_variation(c, d["variation"]),
        )

    @extend_schema(request=VariationRefSerializer, responses={200: ConceptDetailSerializer})
    @action(detail=True, methods=["post"], url_path="restore-variation")
    def restore_variation(self, request: Request, pk: int) -> Response:
        return self._edit(
            request,
            VariationRefSerializer,
            lambda c, d: services.restore_variation(c, d["variation"]),
        )

    @extend_schema(request=RejectSerializer, responses={200: ConceptDetailSerializer})
    @action(detail=True, methods=["post"])
    def reject(self, request: Request, pk: int) -> Response:
        return self._edit(
            request, RejectSerializer, lambda c, d: services.reject_concept(c, d["note"])
        )

    @extend_schema(request=None, responses={200: ConceptDetailSerializer})
    @action(detail=True, methods=["post"])
    def restore(self, request: Request, pk: int) -> Response:
        return self._edit(request, serializers.Serializer, lambda c, d: services.restore_concept(c))


# --- Example selections -------------------------------------------------------------------


class SelectedExampleSerializer(serializers.ModelSerializer):
    concept = serializers.IntegerField(source="example.concept_id", read_only=True)
    variation = serializers.CharField(source="example.variation.label", read_only=True)
    example = ExampleSerializer(read_only=True)

    class Meta:
        model = SelectedExample
        fields = ["position", "concept", "variation", "example"]
        read_only_fields = fields


class ExampleSelectionSerializer(serializers.ModelSerializer):
    concepts: serializers.PrimaryKeyRelatedField = serializers.PrimaryKeyRelatedField(
        many=True, read_only=True
    )
    page = PageField("lexical:selection_detail")

    class Meta:
        model = ExampleSelection
        fields = ["id", "name", "src_lang", "tgt_lang", "seed", "params", "concepts",
                  "created_at", "page"]  # fmt: skip
        read_only_fields = fields


class ExampleSelectionDetailSerializer(ExampleSelectionSerializer):
    examples = serializers.SerializerMethodField()

    class Meta(ExampleSelectionSerializer.Meta):
        fields = [*ExampleSelectionSerializer.Meta.fields, "examples"]
        read_only_fields = fields

    def get_examples(self, selection: ExampleSelection) -> Any:
        selected = selection.selected.select_related(
            "example__pair", "example__variation"
        ).order_by("position")
        return SelectedExampleSerializer(selected, many=True).data


class SelectionRequestSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    mining_job = serializers.IntegerField(min_value=1, max_value=MAX_ID, required=False)
    concepts = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
        required=False,
        max_length=100_000,
    )
    seed = serializers.IntegerField(min_value=0, max_value=MAX_ID, required=False)
    max_concepts = serializers.IntegerField(min_value=1, max_value=10_000, default=20)
    pairs_per_concept = serializers.IntegerField(min_value=2, max_value=1000, default=10)
    tolerance = serializers.FloatField(min_value=0, max_value=1, default=0.20)


class ExampleSelectionViewSet(ScopedReadViewSet):
    """Example selections for lexical-selection studies (seed 004 App. A.2), staff only."""

    permission_classes = [IsAdminUser]
    parser_classes = [StrictJSONParser]
    list_serializer = ExampleSelectionSerializer
    detail_serializer = ExampleSelectionDetailSerializer
    object_for_user = staticmethod(selection_for_user)

    @staticmethod
    def objects_for_user(user):
        return selections_for_user(user).prefetch_related("concepts")

    @extend_schema(
        request=SelectionRequestSerializer, responses={201: ExampleSelectionDetailSerializer}
    )
    def create(self, request: Request) -> Response:
        """Select examples from a mining job's concepts or listed concepts of one language
        pair; the seed (random when not given) is stored and reproduces the selection."""
        body = SelectionRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        params = SelectionParams(
            max_concepts=data["max_concepts"],
            pairs_per_concept=data["pairs_per_concept"],
            tolerance=data["tolerance"],
        )
        try:
            concepts, source = services.concepts_to_select(
                concepts_for_user(request.user),
                mining_job=data.get("mining_job"),
                concept_ids=data.get("concepts", []),
            )
            selection = services.create_example_selection(
                concepts, name=data["name"], seed=data.get("seed"), params=params, source=source
            )
        except services.SelectionError as exc:
            field = exc.field or "non_field_errors"
            return Response(field_errors({field: [str(exc)]}), status=status.HTTP_400_BAD_REQUEST)
        context = self.get_serializer_context()
        data = ExampleSelectionDetailSerializer(selection, context=context).data
        return Response(data, status=status.HTTP_201_CREATED)
