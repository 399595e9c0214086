"""REST API for DTAiLS files (staff only): import a dataset (multipart), export a selection or a
finished lexical-selection study as CSV.

An import is all or nothing; a refused one is a 400 whose ``errors`` are keyed by the field at
fault (``csv_file``, ``words_file``, ``name``, ``src_lang``, ``tgt_lang``), each message naming
its line (``line 57: label 'z' is not one of the variations [...]``)."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_errors import field_errors
from core.http import download
from core.uploads import validate_upload_size
from lexical.concepts.selectors import selection_for_user
from lexical.dtails import exports
from lexical.dtails.selectors import import_report, study_csv_response, study_for_user
from lexical.dtails.services import ImportRefused, import_dtails_upload


class DtailsImportSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    src_lang = serializers.CharField(max_length=16, default="en")
    tgt_lang = serializers.CharField(max_length=16)
    csv_file = serializers.FileField(validators=[validate_upload_size])
    words_file = serializers.FileField(required=False, validators=[validate_upload_size])
    keep_duplicates = serializers.BooleanField(
        default=False,
        help_text="import a row repeating an earlier one as a second example (the selection "
        "exports back to the same bytes) instead of once",
    )


IMPORTED = inline_serializer(
    "DtailsImported",
    {
        "selection": serializers.IntegerField(),
        "name": serializers.CharField(),
        "rows": serializers.IntegerField(),
        "concepts": serializers.IntegerField(),
        "repeated_rows": serializers.IntegerField(
            help_text="rows repeating an earlier row: imported once, or kept with keep_duplicates"
        ),
        "report": serializers.ListField(child=serializers.CharField()),
    },
)


class DtailsViewSet(viewsets.ViewSet):
    """DTAiLS import and exports (staff only)."""

    permission_classes = [IsAdminUser]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": DtailsImportSerializer},
        responses={201: IMPORTED},
    )
    def create(self, request: Request) -> Response:
        """Import a DTAiLS CSV (+ optional words file) as a new example selection."""
        body = DtailsImportSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            selection = import_dtails_upload(body.validated_data)
        except ImportRefused as exc:
            return Response(field_errors(exc.errors), status=status.HTTP_400_BAD_REQUEST)
        payload = {
            "selection": selection.pk,
            "name": selection.name,
            "rows": selection.params["rows"],
            "concepts": selection.concepts.count(),
            "repeated_rows": selection.params["repeated_rows"],
            "report": import_report(selection),
        }
        return Response(payload, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[OpenApiParameter("selection_id", int, OpenApiParameter.PATH)],
        responses={(200, "text/csv"): OpenApiTypes.STR},
    )
    @action(
        detail=False, methods=["get"], url_path=r"selections/(?P<selection_id>[0-9]{1,18})",
        url_name="selection",
    )  # fmt: skip
    def selection(self, request: Request, selection_id: str) -> HttpResponse:
        """A selection's examples in the released DTAiLS shape (label = attested variation)."""
        selection = selection_for_user(request.user, int(selection_id))
        return download(exports.selection_csv(selection), f"selection-{selection.pk}-dtails.csv")

    @extend_schema(
        parameters=[
            OpenApiParameter("campaign_id", int, OpenApiParameter.PATH),
            OpenApiParameter(
                "extended", bool, description="every item with its votes, not the released shape"
            ),
        ],
        responses={(200, "text/csv"): OpenApiTypes.STR},
    )
    @action(
        detail=False, methods=["get"], url_path=r"studies/(?P<campaign_id>[0-9]{1,18})",
        url_name="study",
    )  # fmt: skip
    def study(self, request: Request, campaign_id: str) -> HttpResponse:
        """A finished lexical-selection study: the items with sufficient context (released
        shape), or with ``?extended=true`` every item with votes, majority and agreement."""
        campaign = study_for_user(request.user, int(campaign_id))
        extended = request.query_params.get("extended", "").lower() in ("1", "true", "yes")
        return study_csv_response(campaign, extended=extended)
