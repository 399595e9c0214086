"""REST API of the annotation app: campaigns, items, annotators, annotations and exports.

Same rules as the pages (``annotation/access.py``): every ``get_queryset`` is scoped to what the
user may see, so another annotator's item or annotation is a 404 exactly like a missing one;
writes go through ``annotation/services/``; a refused write answers the status the pages
answer (``annotation.refusals``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error

from annotation import access, exports, item_refs, progress, refusals
from annotation.api.serializers import (
    AnnotationSerializer,
    AnnotatorAnnotationSerializer,
    AnnotatorItemSerializer,
    AnnotatorSerializer,
    CampaignProgressSerializer,
    CampaignSerializer,
    ExportQuerySerializer,
    ImportCampaignSerializer,
    ImportErrorSerializer,
    ItemSerializer,
    NextItemSerializer,
    SubmitAnnotationSerializer,
    next_item_body,
    submitted_body,
)
from annotation.import_kinds import CAMPAIGN_KIND, campaign_options
from annotation.models import Campaign
from annotation.services import campaigns, claims, submissions
from core.api_negotiation import FileNegotiation
from core.http import streamed_download
from imports import services as import_services
from imports.api.serializers import ImportJobSerializer
from imports.api.views import import_in_background

if TYPE_CHECKING:
    from django.contrib.auth.models import User

IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=False,
    description="Any unique string per submission (≤ 64 chars); a retry with the same key "
    "returns the same annotation and changes nothing.",
)


def _is_staff(request: Request) -> bool:
    return bool(request.user and request.user.is_staff)


def _of_campaign(request: Request, queryset: QuerySet) -> QuerySet:
    """``queryset`` narrowed to ``?campaign=<id>`` when the query names one."""
    campaign = request.query_params.get("campaign")
    if campaign:
        if not campaign.isdigit():
            raise ValidationError({"campaign": "must be a campaign id"})
        queryset = queryset.filter(campaign_id=int(campaign))
    return queryset


def _refused(refusal: refusals.NotAllowed | refusals.AnswerInvalid) -> Response:
    """A refused claim or submission, with the status the pages answer too."""
    body: dict[str, object] = {"detail": str(refusal)}
    if isinstance(refusal, refusals.AnswerInvalid):
        body["errors"], body["missing"] = refusals.reasons(refusal)
    return Response(body, status=refusals.http_status(refusal))


class CampaignViewSet(viewsets.ReadOnlyModelViewSet):
    """Campaigns: all of them for staff, the ones you are enrolled in for annotators."""

    serializer_class = CampaignSerializer

    def get_queryset(self):
        return access.campaigns_visible_to(self.request.user).order_by("-created_at", "id")

    def _campaign_for_admin(self, pk) -> Campaign:
        return access.campaign_for_admin(self.request.user, pk)

    @extend_schema(
        request=None,
        responses={
            200: NextItemSerializer,
            204: OpenApiResponse(description="nothing left for you in this campaign"),
            403: OpenApiResponse(
                description="not allowed now (paused, pending, closed), or a read-only token"
            ),
        },
    )
    @action(detail=True, methods=["get"], url_path="next-item")
    def next_item(self, request: Request, pk=None) -> Response:
        """Claim (or resume) your next item in this campaign (not with a read-only token)."""
        # A GET that writes (the claim and its draft): refused to a read-only token as an unsafe
        # method is (accounts.authentication, docs/adr/0011), duck-typed as annotation may not
        # import accounts.
        if getattr(request.auth, "read_only", False):
            raise PermissionDenied("This token is read-only.")
        key = access.own_enrollment_key(request.user, pk)
        if key is None:
            raise Http404("No such campaign")
        try:
            claim = claims.next_claim(*key)
        except refusals.NotEnrolled:
            # The table's 404, with the body of a missing campaign: existence must not leak.
            raise Http404("No such campaign") from None
        except refusals.NotAllowed as exc:
            return _refused(exc)
        if claim is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(next_item_body(claim.item, claims.claimed_annotation(claim)))

    @extend_schema(request=None, responses=CampaignProgressSerializer)
    @action(detail=True, methods=["get"])
    def progress(self, request: Request, pk=None) -> Response:
        """Progress, per-annotator QC and agreement (staff only), as on the dashboard."""
        campaign = self._campaign_for_admin(pk)
        data = {
            "progress": progress.campaign_progress(campaign),
            "annotators": progress.annotator_progress(campaign),
            "agreement": progress.campaign_agreement(campaign),
        }
        return Response(CampaignProgressSerializer(data).data)

    @extend_schema(
        parameters=[ExportQuerySerializer],
        responses={
            (200, "application/jsonl"): OpenApiTypes.BINARY,
            (200, "text/csv"): OpenApiTypes.BINARY,
            (200, "text/tab-separated-values"): OpenApiTypes.BINARY,
        },
    )
    @action(detail=True, methods=["get"], content_negotiation_class=FileNegotiation)
    def export(self, request: Request, pk=None):
        """Stream an export (staff only): ``?format=jsonl|csv|mqm-tsv&aggregate=true``."""
        campaign = self._campaign_for_admin(pk)
        query = ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        fmt, aggregate = query.validated_data["format"], query.validated_data["aggregate"]
        try:
            chunks = exports.stream_export(campaign, fmt, aggregate=aggregate)
        except exports.ExportError as exc:
            raise ValidationError({"format": str(exc)}) from exc
        spec = exports.ExportRequest(campaign, fmt, aggregate)
        return streamed_download(chunks, spec.filename, spec.content_type)

    @extend_schema(
        request=ImportCampaignSerializer,
        responses={201: CampaignSerializer, 202: ImportJobSerializer, 400: ImportErrorSerializer},
    )
    @action(detail=False, methods=["post"], url_path="import")
    def import_campaign(self, request: Request) -> Response:
        """Create a campaign with its items (staff only); a bad item writes nothing. A ``file``
        above ``IMPORT_INLINE_MAX_MB`` is imported by a worker: 202 with the import job."""
        if not _is_staff(request):
            raise PermissionDenied("Only staff can import campaigns.")
        body = ImportCampaignSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        settings = data.get("settings") or {}
        if data.get("file") and import_services.runs_in_background(data["file"]):
            return self._import_in_background(request, data)
        try:
            if data.get("jsonl") or data.get("file"):
                campaign = campaigns.import_campaign(
                    data.get("jsonl") or data["file"],
                    name=data["name"],
                    protocol=data["protocol"],
                    file_format=data["format"],
                    offset_unit=data["offset_unit"],
                    **settings,
                )
            else:
                campaign = campaigns.create_campaign(
                    data["name"],
                    data["protocol"],
                    data["items"],
                    offset_unit=data["offset_unit"],
                    **settings,
                )
        except refusals.CampaignImportError as exc:
            errors = [{exc.unit: number, "reason": reason} for number, reason in exc.errors]
            return Response({"detail": str(exc), "errors": errors}, status=400)
        except DjangoValidationError as exc:  # a bad setting or a name taken: keyed by field
            raise ValidationError(as_serializer_error(exc)) from exc
        except (ValueError, TypeError) as exc:
            return Response({"detail": str(exc)}, status=400)
        # Only staff get here (checked above), so never the anonymous user.
        campaign.created_by = cast("User", request.user)
        campaign.save(update_fields=["created_by"])
        return Response(CampaignSerializer(campaign).data, status=status.HTTP_201_CREATED)

    def _import_in_background(self, request: Request, data: dict) -> Response:
        """A file above ``IMPORT_INLINE_MAX_MB``: 202 with the import job a worker runs."""
        options = campaign_options(
            name=data["name"], protocol=data["protocol"], file_format=data["format"],
            settings=data.get("settings") or {}, offset_unit=data["offset_unit"],
            file_name=data["file"].name,
        )  # fmt: skip
        return import_in_background(request, CAMPAIGN_KIND, data["file"], options)


class ItemViewSet(viewsets.ReadOnlyModelViewSet):
    """Items: all for staff (``?campaign=<id>`` filters), the ones you claimed for annotators,
    who know them by reference (the ``id`` next-item gives) rather than by id."""

    def get_serializer_class(self):
        return ItemSerializer if _is_staff(self.request) else AnnotatorItemSerializer

    def get_object(self):
        if not _is_staff(self.request):
            found = item_refs.item_id(self.kwargs.get(self.lookup_field))
            if found is None:
                raise Http404("No such item")
            self.kwargs[self.lookup_field] = found
        return super().get_object()

    @extend_schema(
        parameters=[OpenApiParameter("campaign", OpenApiTypes.INT, description="campaign id")]
    )
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    def get_queryset(self):
        queryset = access.items_visible_to(self.request.user).order_by(
            "campaign_id", "position", "id"
        )
        return _of_campaign(self.request, queryset).distinct()


class AnnotatorViewSet(viewsets.ReadOnlyModelViewSet):
    """Annotators by pseudonym: all for staff, yourself for annotators."""

    serializer_class = AnnotatorSerializer

    def get_queryset(self):
        return access.annotators_visible_to(self.request.user).prefetch_related("enrollments")


class AnnotationViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Annotations: all for staff (``?campaign=<id>``), your own for annotators.

    ``POST`` submits (or revises) your answer for an item you claimed, through
    ``submissions.submit_annotation``; it is idempotent by ``Idempotency-Key`` / ``client_id``.
    Annotators see (and send) items by reference, staff by id in the list.
    """

    def get_serializer_class(self):
        return AnnotationSerializer if _is_staff(self.request) else AnnotatorAnnotationSerializer

    def get_queryset(self):
        queryset = access.annotations_visible_to(self.request.user).select_related("annotator")
        return _of_campaign(self.request, queryset).order_by("id")

    @extend_schema(
        parameters=[IDEMPOTENCY_HEADER],
        request=SubmitAnnotationSerializer,
        responses={
            201: AnnotatorAnnotationSerializer,
            200: OpenApiResponse(AnnotatorAnnotationSerializer, "a replay or a revision"),
            400: OpenApiResponse(description="a body that is not a submission (field errors)"),
            422: OpenApiResponse(description="answer invalid or incomplete: errors, missing"),
            403: OpenApiResponse(description="not allowed now (campaign closed, paused)"),
            404: OpenApiResponse(description="no such item among the items you claimed"),
        },
    )
    def create(self, request: Request, *args, **kwargs) -> Response:
        body = SubmitAnnotationSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        key = request.headers.get("Idempotency-Key") or data.get("client_id") or ""
        if len(key) > 64:
            raise ValidationError({"idempotency_key": "at most 64 characters"})
        item_id = item_refs.item_id(data["item"])
        if item_id is None:
            raise Http404("No such item")
        item, assignment = access.item_for_annotator(request.user, item_id)
        try:
            result = submissions.submit_annotation(
                assignment.annotator, item, data["answer"], idempotency_key=key
            )
        except (refusals.AnswerInvalid, refusals.NotAllowed) as exc:
            return _refused(exc)
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        response = Response(submitted_body(result.annotation), status=code)
        if result.replayed:
            response["Idempotent-Replayed"] = "true"
        return response
