"""REST API for transfers of MT-breaker texts (seed 001 §3.3–3.5): create, list, retrieve (with
the matrix), per-text results, cancel and exports. Staff only, like breaker runs; a refused
configuration is a 400 with ``errors`` keyed by field, and nothing is written."""

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
from search.breaker.services import RunStateError
from search.breaker.transfer.selectors import (
    csv_response,
    jsonl_response,
    matrix,
    result_record,
    result_rows,
    transfer_for_user,
    transfers_for_user,
)
from search.breaker.transfer.services import cancel_transfer, start_transfer
from search.models import BreakerTransfer


class BreakerTransferSerializer(JobSerializer):
    runs: serializers.PrimaryKeyRelatedField = serializers.PrimaryKeyRelatedField(
        many=True, read_only=True
    )
    budget_money = serializers.FloatField(read_only=True, allow_null=True)
    links = LinksField(
        page="search:breaker_transfer",
        results="breaker-transfer-results",
        csv="search:breaker_transfer_csv",
        jsonl="search:breaker_transfer_jsonl",
    )

    class Meta:
        model = BreakerTransfer
        fields = [
            "id", "name", "status", "error", "runs", "translators", "languages", "qe_engines",
            "budget_money", "round_index", "items_done", "items_total", "progress", "cost",
            "created_at", "started_at", "finished_at", "links",
        ]  # fmt: skip
        read_only_fields = fields


class BreakerTransferDetailSerializer(BreakerTransferSerializer):
    matrix = serializers.SerializerMethodField(
        help_text="Rows: runs; cells per (translator, language): mean quality 0–100 (mean over "
        "the QE engines; lower = harder), texts scored, errors, own target, lowest in column."
    )

    class Meta(BreakerTransferSerializer.Meta):
        fields = [*BreakerTransferSerializer.Meta.fields, "matrix"]
        read_only_fields = fields

    def get_matrix(self, transfer: BreakerTransfer) -> dict:
        table = matrix(transfer)
        columns = [{"translator": t, "language": lang} for t, lang in table.columns]
        return {"columns": columns, "rows": [_row(row) for row in table.rows]}


def _row(row) -> dict:
    cells = [
        {"mean_quality": c.mean, "texts": c.texts, "errors": c.errors, "own_target": c.own,
         "lowest_in_column": c.lowest}
        for c in row.cells
    ]  # fmt: skip
    return {"run": row.run.pk, "name": row.run.name, "method": row.run.method, "cells": cells}


class TransferConfigSerializer(serializers.Serializer):
    """A transfer's configuration (documented here; validated by
    ``search.breaker.transfer.config``)."""

    name = serializers.CharField()
    runs = serializers.ListField(child=serializers.IntegerField(), required=False)
    comparison = serializers.CharField(required=False, help_text="All runs of a comparison.")
    translators = serializers.ListField(child=serializers.CharField())
    languages = serializers.ListField(child=serializers.CharField())
    qe = serializers.ListField(child=serializers.CharField())
    budget_money = serializers.FloatField(required=False)


class BreakerTransferViewSet(JobViewSet):
    """Transfers of MT-breaker texts to other translators and languages (staff only)."""

    list_serializer = BreakerTransferSerializer
    detail_serializer = BreakerTransferDetailSerializer
    object_for_user = staticmethod(transfer_for_user)
    cancel_job = staticmethod(cancel_transfer)
    state_error = RunStateError

    @staticmethod
    def objects_for_user(user):
        return transfers_for_user(user).prefetch_related("runs")

    @start_schema(TransferConfigSerializer, BreakerTransferDetailSerializer)
    def create(self, request: Request) -> Response:
        """Start a transfer of finished runs' selected texts."""
        return self.started(start_transfer)

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get"])
    def results(self, request: Request, pk=None) -> Response:
        """Every translation with its QE scores (paginated), in the matrix's order."""
        page = self.paginate_queryset(result_rows(self.get_object()))
        assert page is not None  # pagination is always on
        return self.get_paginated_response([result_record(r) for r in page])

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    @action(detail=True, methods=["get"], url_path="matrix-csv", url_name="matrix-csv")
    def matrix_csv(self, request: Request, pk=None) -> HttpResponse:
        """The matrix in long form: one CSV line per (run, translator, language)."""
        return csv_response(self.get_object())

    @extend_schema(responses={(200, "application/x-ndjson"): OpenApiTypes.STR})
    @action(detail=True, methods=["get"])
    def export(self, request: Request, pk=None) -> StreamingHttpResponse:
        """Every translation as JSON Lines."""
        return jsonl_response(self.get_object())
