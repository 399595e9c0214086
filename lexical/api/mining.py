"""REST API for mining jobs (seed 004 §2.1): start, list, retrieve (with the mined concepts),
cancel. Staff only, like the pages; refused parameters are a 400 with ``errors`` by field and
nothing is written."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_errors import field_errors
from core.api_jobs import JobSerializer, JobViewSet, start_schema
from core.api_links import LinksField
from lexical.mining.params import MiningParamsError
from lexical.mining.selectors import (
    concepts_of,
    corpora_for_user,
    mining_job_for_user,
    mining_jobs_for_user,
)
from lexical.mining.services import MiningStateError, cancel_mining, start_mining
from lexical.models import MiningJob


class MiningJobSerializer(JobSerializer):
    corpus: serializers.PrimaryKeyRelatedField = serializers.PrimaryKeyRelatedField(read_only=True)
    links = LinksField(page="lexical:mining_job")

    class Meta:
        model = MiningJob
        fields = [
            "id", "corpus", "status", "error", "params", "stats", "pos_used", "round_index",
            "items_done", "items_total", "progress", "created_at", "started_at", "finished_at",
            "links",
        ]  # fmt: skip
        read_only_fields = fields


class MinedConceptSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    lemma = serializers.CharField()
    pos = serializers.CharField()
    entropy = serializers.FloatField(allow_null=True)
    total_count = serializers.IntegerField()
    variations = serializers.SerializerMethodField()

    def get_variations(self, concept) -> list[dict]:
        return [
            {"lemma": v.lemma, "label": v.label, "surface_forms": v.surface_forms, "count": v.count}
            for v in concept.variations.all()
        ]


class MiningJobDetailSerializer(MiningJobSerializer):
    concepts = serializers.SerializerMethodField()

    class Meta(MiningJobSerializer.Meta):
        fields = [*MiningJobSerializer.Meta.fields, "concepts"]
        read_only_fields = fields

    @extend_schema_field(MinedConceptSerializer(many=True))
    def get_concepts(self, job: MiningJob) -> list[dict]:
        return list(MinedConceptSerializer(concepts_of(job), many=True).data)


class MiningStartSerializer(serializers.Serializer):
    """A mining job to start (validated by ``lexical.mining.params``)."""

    corpus = serializers.IntegerField()
    params = serializers.DictField(required=False, help_text="Thresholds; the paper's defaults.")


class MiningJobViewSet(JobViewSet):
    """Jobs that mine a parallel corpus for concepts with variations (staff only)."""

    list_serializer = MiningJobSerializer
    detail_serializer = MiningJobDetailSerializer
    objects_for_user = staticmethod(mining_jobs_for_user)
    object_for_user = staticmethod(mining_job_for_user)
    cancel_job = staticmethod(cancel_mining)
    state_error = MiningStateError

    @start_schema(MiningStartSerializer, MiningJobDetailSerializer)
    def create(self, request: Request) -> Response:
        """Start mining a corpus; ``params`` default to the paper's thresholds."""
        body = request.data
        if not isinstance(body, dict):
            errors = {"body": "must be a JSON object"}
            return Response(field_errors(errors), status=status.HTTP_400_BAD_REQUEST)
        unknown = sorted(str(k)[:50] for k in body if k not in {"corpus", "params"})
        reference = body.get("corpus")
        if unknown:
            errors = {name: "unknown field" for name in unknown}
            return Response(field_errors(errors), status=status.HTTP_400_BAD_REQUEST)
        if isinstance(reference, bool) or not isinstance(reference, int):
            errors = {"corpus": "must be the id of a corpus"}
            return Response(field_errors(errors), status=status.HTTP_400_BAD_REQUEST)
        corpus = corpora_for_user(request.user).filter(pk=reference).first()
        if corpus is None:
            errors = {"corpus": f"no corpus with id {reference}"}
            return Response(field_errors(errors), status=status.HTTP_400_BAD_REQUEST)
        try:
            job = start_mining(corpus, body.get("params"), created_by=request.user)
        except MiningParamsError as exc:
            errors = {f"params.{k}" if k != "params" else k: v for k, v in exc.errors.items()}
            return Response(field_errors(errors), status=status.HTTP_400_BAD_REQUEST)
        except MiningStateError as exc:
            return Response(field_errors({"corpus": str(exc)}), status=status.HTTP_400_BAD_REQUEST)
        return Response(self.detail_data(job), status=status.HTTP_201_CREATED)
