from dataclasses import asdict

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from engines import selectors, services
from engines.api.serializers import (
    EngineCheckSerializer,
    EngineSerializer,
    EngineTotalsSerializer,
)
from engines.models import Engine


class EngineViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Engines (staff only). Writes go through ``engines.services.save_engine``; no deletes
    (the cost ledger refers to engines): disable one with ``enabled: false``."""

    serializer_class = EngineSerializer
    permission_classes = [IsAdminUser]
    lookup_field = "name"
    lookup_value_regex = r"[A-Za-z0-9][A-Za-z0-9._-]*"
    queryset = Engine.objects.order_by("name")

    def _save(self, serializer, instance=None):
        try:
            serializer.instance = services.save_engine(serializer.validated_data, instance)
        except DjangoValidationError as exc:
            raise ValidationError(
                exc.message_dict if hasattr(exc, "message_dict") else exc.messages
            ) from exc

    def perform_create(self, serializer):
        self._save(serializer)

    def perform_update(self, serializer):
        self._save(serializer, serializer.instance)

    @extend_schema(responses=EngineTotalsSerializer)
    @action(detail=True, methods=["get"])
    def totals(self, request: Request, name: str | None = None) -> Response:
        return Response(EngineTotalsSerializer(selectors.engine_totals(self.get_object())).data)

    @extend_schema(request=None, responses=EngineCheckSerializer)
    @action(detail=True, methods=["post"], url_path="check")
    def run_check(self, request: Request, name: str | None = None) -> Response:
        """One real sample call, cache bypassed (the page's "Test" button)."""
        result = services.check_engine(self.get_object())
        return Response(EngineCheckSerializer(asdict(result)).data)
