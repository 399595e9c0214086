"""REST API for model evaluations (seed 004 §4): create, list, retrieve, results, cancel and the
CSV exports. Staff only; a refused configuration is a 400 with ``errors`` keyed by field, and
nothing is written."""

from __future__ import annotations

from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_jobs import JobSerializer, JobViewSet, start_schema
from core.api_links import LinksField
from lexical.evaluation import selectors
from lexical.evaluation.services import (
    EvaluationStateError,
    cancel_evaluation,
    start_lexical_evaluation,
)
from lexical.models import LexicalEvaluation


class LexicalEvaluationSerializer(JobSerializer):
    links = LinksField(
        page="lexical:evaluation:detail",
        results="lexical-evaluation-results",
        chart="lexical:evaluation:chart",
        answers_csv="lexical:evaluation:answers_csv",
        summary_csv="lexical:evaluation:summary_csv",
    )

    class Meta:
        model = LexicalEvaluation
        fields = [
            "id", "name", "status", "error", "selection", "entries", "runs", "seed",
            "temperature", "round_index", "items_done", "items_total", "progress", "cost",
            "created_at", "started_at", "finished_at", "links",
        ]  # fmt: skip
        read_only_fields = fields


class EvaluationConfigSerializer(serializers.Serializer):
    """An evaluation's configuration (documented here; validated by
    ``lexical.evaluation.config``)."""

    name = serializers.CharField(required=False)
    selection = serializers.IntegerField(help_text="An example selection's id.")
    entries = serializers.ListField(
        child=serializers.CharField(),
        help_text="NAME:none, NAME:self, NAME:other:GENERATOR (chat) or NAME:translate.",
    )
    runs = serializers.IntegerField(required=False, help_text="1–10, default 3.")
    seed = serializers.IntegerField(required=False, help_text="Drawn and stored when absent.")


def results_record(evaluation: LexicalEvaluation) -> dict:
    results = selectors.results(evaluation)
    keys = [e.key for e in results.entries] + ["baseline"]
    return {
        "evaluation": evaluation.pk,
        "status": evaluation.status,
        "summary": [selectors.summary_record(line) for line in results.summary],
        "concepts": [
            {
                "concept": c.concept,
                "lemma": c.lemma,
                "variations": c.variations,
                "examples": c.examples,
                "accuracy": dict(zip(keys, c.accuracies, strict=True)),
            }
            for c in results.concepts
        ],
        "position_bias": [
            {"options": b.size, "entry": key, "counts": counts}
            for b in results.bias
            for key, counts in b.series
        ],
        "human": _human_record(evaluation),
    }


def _human_record(evaluation: LexicalEvaluation) -> dict | None:
    """The human reference row (a selection study of the same selection), or null."""
    human = selectors.human_reference(evaluation)
    if human is None:
        return None
    return {
        "label": human.label,
        "study": human.study.pk,
        "annotators_per_item": human.accuracy.annotators_per_item,
        "examples": human.accuracy.examples,
        "correct": human.accuracy.correct,
        "missing": human.accuracy.missing,
        "accuracy": human.accuracy.accuracy,
    }


class LexicalEvaluationViewSet(JobViewSet):
    """Model evaluations on lexical selection (staff only)."""

    list_serializer = detail_serializer = LexicalEvaluationSerializer
    objects_for_user = staticmethod(selectors.evaluations_for_user)
    object_for_user = staticmethod(selectors.evaluation_for_user)
    cancel_job = staticmethod(cancel_evaluation)
    state_error = EvaluationStateError

    @start_schema(EvaluationConfigSerializer, LexicalEvaluationSerializer)
    def create(self, request: Request) -> Response:
        """Start an evaluation of engines × settings on an example selection."""
        return self.started(start_lexical_evaluation)

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get"])
    def results(self, request: Request, pk=None) -> Response:
        """Micro/macro accuracy (mean ± sd over runs) per entry and language with the frequency
        baseline, accuracy per concept, and position-bias counts."""
        return Response(results_record(self.get_object()))

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    @action(detail=True, methods=["get"], url_path="answers-csv", url_name="answers-csv")
    def answers_csv(self, request: Request, pk=None) -> StreamingHttpResponse:
        """Every answer, one CSV line each."""
        return selectors.answers_csv_response(self.get_object())

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    @action(detail=True, methods=["get"], url_path="summary-csv", url_name="summary-csv")
    def summary_csv(self, request: Request, pk=None) -> HttpResponse:
        """The accuracy table, one CSV line per entry and language (and the baseline)."""
        return selectors.summary_csv_response(self.get_object())
