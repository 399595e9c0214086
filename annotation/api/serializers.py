"""Serializers of the annotation API.

Two views of an item: staff see everything; annotators see what the annotating page shows and
nothing that gives a check away (``kind``, ``expected``, ``origin``, ``meta`` may name the
corrupted phrase of a generated attention check; ``doc_id`` and ``seg_id`` repeat those of the
item a check copies, and the system is not shown to annotators at all), and they know items by
reference, not by id (``annotation/item_refs.py``). Annotators appear by pseudonym only.
"""

from __future__ import annotations

import copy
from typing import Any

from rest_framework import serializers

from annotation import exports, formats, item_refs, protocols
from annotation.formats import offsets
from annotation.models import Annotation, Annotator, Campaign, Enrollment, Item
from annotation.services.campaigns import campaign_settings
from core.uploads import validate_upload_size


# Mixin for a read-only ``ModelSerializer`` that every next-item or submission answers with:
# DRF builds its fields from the model on each instance (most of the time serializing a
# response takes); they are built once per class here and copied, as a plain ``Serializer``
# copies its declared fields. Same fields, so the same schema. (A comment, not a docstring:
# the schema would show a docstring as the description of a serializer that has none.)
class FieldsBuiltOnce:
    def get_fields(self) -> dict[str, Any]:
        built = type(self).__dict__.get("_built_fields")
        if built is None:
            built = super().get_fields()  # type: ignore[misc]
            type(self)._built_fields = built  # type: ignore[attr-defined]
        return copy.deepcopy(built)


class CampaignSerializer(serializers.ModelSerializer):
    # A plain string: the model's SlugField would document a pattern that the empty value
    # (no group, the default) does not match.
    exclusive_group = serializers.CharField(
        read_only=True,
        help_text="Campaigns sharing a non-empty group take each person in one of them only.",
    )

    class Meta:
        model = Campaign
        fields = [
            "id", "name", "slug", "protocol", "src_lang", "tgt_lang", "instructions", "overlap",
            "status", "multi_select", "ask_confidence", "confidence_labels", "tie_rule",
            "shuffle_items", "mqm_allow_critical", "mqm_weights", "required_native_languages",
            "required_working_languages", "exclusive_group", "text_format",
            "assignment_policy", "assignment_goal", "assignment_alpha", "assignment_tolerance",
            "assignment_prior", "assignment_state", "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = fields


class ItemSerializer(serializers.ModelSerializer):
    """Staff view of an item (all fields, provenance included)."""

    class Meta:
        model = Item
        fields = [
            "id", "campaign", "doc_id", "seg_id", "src_lang", "tgt_lang", "source", "target",
            "system", "kind", "expected", "question", "choices", "questions", "prefill_spans",
            "origin", "origin_ref", "meta", "position", "completed_count", "created_at",
        ]  # fmt: skip
        read_only_fields = fields


class ItemRefField(serializers.IntegerField):
    """An item's id as annotators know it: its reference (``annotation/item_refs.py``)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("read_only", True)
        kwargs.setdefault("help_text", "the item's reference (the id annotators know it by)")
        super().__init__(**kwargs)

    def to_representation(self, value) -> int:
        return item_refs.item_ref(int(value))


class AnnotatorItemSerializer(FieldsBuiltOnce, serializers.ModelSerializer):
    """Annotator view of an item: what the annotating page shows, no QC giveaways."""

    id = ItemRefField(source="pk")

    class Meta:
        model = Item
        fields = [
            "id", "campaign", "src_lang", "tgt_lang", "source", "target", "question", "choices",
            "questions", "prefill_spans",
        ]  # fmt: skip
        read_only_fields = fields


class EnrollmentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Enrollment
        fields = ["campaign", "status", "qualified", "created_at"]
        read_only_fields = fields


class AnnotatorSerializer(serializers.ModelSerializer):
    """An annotator by pseudonym; never the user's name, username or email."""

    enrollments = EnrollmentSerializer(many=True, read_only=True)

    class Meta:
        model = Annotator
        fields = [
            "id", "pseudonym", "native_language", "working_languages", "source", "consent_at",
            "created_at", "enrollments",
        ]  # fmt: skip
        read_only_fields = fields


class AnnotationSerializer(FieldsBuiltOnce, serializers.ModelSerializer):
    annotator: serializers.SlugRelatedField[Annotator] = serializers.SlugRelatedField(
        slug_field="pseudonym", read_only=True
    )

    class Meta:
        model = Annotation
        fields = [
            "id", "campaign", "item", "annotator", "status", "answer", "draft", "score",
            "mqm_score", "option_order", "time_spent_seconds", "revision", "submitted_at",
            "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = fields


class AnnotatorAnnotationSerializer(AnnotationSerializer):
    """An annotator's own annotation: its item by reference."""

    item = ItemRefField(source="item_id")


class SubmitAnnotationSerializer(serializers.Serializer):
    """``POST /api/annotations/``: an answer for an item the caller has claimed.

    Idempotent: send an ``Idempotency-Key`` header (or ``client_id`` in the body); a retry with
    the same key returns the annotation it created and changes nothing.
    """

    item = serializers.IntegerField(
        help_text="the id next-item gave the item you claimed (its reference)"
    )
    answer = serializers.JSONField(
        help_text="the protocol's answer, see annotation/protocols/ (esa: spans + score; "
        "mqm: spans with category/subcategory/severity or no_errors; esa_mqm: mqm spans + "
        "score; esa, mqm, esa_mqm: or non_scorable: true + non_scorable_reason; choice: "
        "selected indices; translation: translation text)"
    )
    client_id = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=64,
        help_text="client-generated id used as the idempotency key when no header is sent",
    )


class NextItemSerializer(serializers.Serializer):
    """The annotator's next item, with their current draft and the options' display order."""

    item = AnnotatorItemSerializer()
    annotation = serializers.IntegerField(help_text="id of your annotation (draft) of this item")
    draft = serializers.JSONField()
    option_order = serializers.ListField(child=serializers.IntegerField())
    status = serializers.CharField()


def next_item_body(item: Item, annotation: Annotation) -> dict[str, Any]:
    """:class:`NextItemSerializer`'s representation, built directly: next-item answers every
    request of every annotator, and DRF would build and deep-copy both serializers' fields for
    each one. The serializer stays the documented shape; tests check that the two agree."""
    named = {"id": item_refs.item_ref(item.pk), "campaign": item.campaign_id}
    shown = {
        name: named[name] if name in named else getattr(item, name)
        for name in AnnotatorItemSerializer.Meta.fields
    }
    return {
        "item": shown,
        "annotation": annotation.pk,
        "draft": annotation.draft,
        "option_order": [int(index) for index in annotation.option_order],
        "status": annotation.status,
    }


_TIMESTAMP = serializers.DateTimeField(read_only=True)


def submitted_body(annotation: Annotation) -> dict[str, Any]:
    """:class:`AnnotatorAnnotationSerializer`'s representation of the annotation a submission
    answers with, built directly (as :func:`next_item_body`, for the same reason); the
    annotator's pseudonym must be loaded (the submission's claim read it)."""
    body: dict[str, Any] = {}
    for name in AnnotatorAnnotationSerializer.Meta.fields:
        if name == "campaign":
            body[name] = annotation.campaign_id
        elif name == "item":
            body[name] = item_refs.item_ref(annotation.item_id)
        elif name == "annotator":
            body[name] = annotation.annotator.pseudonym
        elif name in ("submitted_at", "created_at", "updated_at"):
            value = getattr(annotation, name)
            body[name] = None if value is None else _TIMESTAMP.to_representation(value)
        else:
            body[name] = getattr(annotation, name)
    return body


class ProtocolField(serializers.ChoiceField):
    """A registered protocol name; the registry is read each time a serializer is built."""

    def __init__(self, **kwargs):
        super().__init__(choices=protocols.choices(), **kwargs)


class ImportCampaignSerializer(serializers.Serializer):
    """``POST /api/campaigns/import/``: items as a JSON list, as text or as an uploaded file
    (JSONL or another format), all or nothing."""

    name = serializers.CharField(max_length=200)
    protocol = ProtocolField()
    items = serializers.ListField(child=serializers.DictField(), required=False)
    jsonl = serializers.CharField(required=False, trim_whitespace=False)
    file = serializers.FileField(
        required=False,
        validators=[validate_upload_size],
        help_text="The items file as a multipart upload (JSONL, Appraise, ...).",
    )
    format = serializers.ChoiceField(
        choices=list(formats.FORMATS),
        default="auto",
        help_text="Format of jsonl or file; auto recognises it.",
    )
    offset_unit = serializers.ChoiceField(
        choices=list(offsets.UNITS),
        default="codepoint",
        help_text="How span offsets (prefill_spans, expected.spans) of items or jsonl count: "
        "codepoint (Python str indices) or utf16 (JavaScript string indices); they are stored "
        "as code points. Appraise and Pearmut files convert their own.",
    )
    settings = serializers.DictField(
        required=False,
        help_text='Campaign fields, e.g. {"overlap": 3, "src_lang": "en", "tgt_lang": '
        '"cs", "multi_select": true}',
    )

    def validate_settings(self, value: dict) -> dict:
        known = campaign_settings()
        unknown = sorted(set(value) - known)
        if unknown:
            raise serializers.ValidationError(
                f"not campaign settings: {', '.join(unknown)} (known: {', '.join(sorted(known))})"
            )
        return value

    def validate(self, attrs):
        given = [key for key in ("items", "jsonl", "file") if attrs.get(key)]
        if len(given) != 1:
            raise serializers.ValidationError(
                "send exactly one of items (a list), jsonl (text) or file (an upload)"
            )
        return attrs


class ImportErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    # A field named "errors": the metaclass pops declared fields, .errors stays the property.
    errors = serializers.ListField(  # type: ignore[assignment]
        child=serializers.DictField(), required=False
    )


class ScoreAgreementSerializer(serializers.Serializer):
    n_items = serializers.IntegerField()
    n_annotators = serializers.IntegerField()
    krippendorff_alpha = serializers.FloatField(allow_null=True)
    mean_kendall_tau = serializers.FloatField(allow_null=True)
    mean_pearson = serializers.FloatField(allow_null=True)


class ChoiceAgreementSerializer(serializers.Serializer):
    n_items = serializers.IntegerField()
    n_categories = serializers.IntegerField()
    total_agreement = serializers.FloatField(allow_null=True)
    fleiss_kappa = serializers.FloatField(allow_null=True)
    pabak = serializers.FloatField(allow_null=True)
    multi_select = serializers.BooleanField()


class FamilyAgreementSerializer(serializers.Serializer):
    family = serializers.CharField()
    question_type = serializers.CharField()
    n_item_questions = serializers.IntegerField()
    n_units = serializers.IntegerField()
    n_categories = serializers.IntegerField()
    total_agreement = serializers.FloatField(allow_null=True)
    fleiss_kappa = serializers.FloatField(allow_null=True)
    pabak = serializers.FloatField(allow_null=True)


class AnnotatorProgressSerializer(serializers.Serializer):
    pseudonym = serializers.CharField()
    enrollment_status = serializers.CharField(source="enrollment.status")
    done = serializers.IntegerField()
    available = serializers.IntegerField()
    in_progress = serializers.IntegerField()
    time_seconds = serializers.FloatField()
    last_active = serializers.DateTimeField(allow_null=True)
    mean_score = serializers.FloatField(allow_null=True)
    qc_verdict = serializers.CharField(source="qc.verdict")
    qc_pass_rate = serializers.FloatField(source="qc.pass_rate", allow_null=True)
    qc_reasons = serializers.ListField(source="qc.reasons", child=serializers.CharField())


class CampaignProgressSerializer(serializers.Serializer):
    campaign = serializers.IntegerField(source="progress.campaign.pk")
    status = serializers.CharField(source="progress.campaign.status")
    n_items = serializers.IntegerField(source="progress.n_items")
    target = serializers.IntegerField(source="progress.target")
    submitted = serializers.IntegerField(source="progress.submitted")
    completed_items = serializers.IntegerField(source="progress.completed_items")
    over_overlap_items = serializers.IntegerField(
        source="progress.over_overlap_items",
        help_text="regular items with more judgments than the overlap (a lapsed claim "
        "submitted late; both judgments kept)",
    )
    percent = serializers.FloatField(
        source="progress.percent",
        help_text="share of the target filled: at most overlap judgments per item count",
    )
    annotators = AnnotatorProgressSerializer(many=True)
    score_agreement = ScoreAgreementSerializer(source="agreement.scores", allow_null=True)
    choice_agreement = ChoiceAgreementSerializer(source="agreement.choices", allow_null=True)
    family_agreement = FamilyAgreementSerializer(source="agreement.families", many=True)
    majority_items = serializers.IntegerField(source="agreement.majority_items")
    tied_items = serializers.IntegerField(source="agreement.tied_items")


class ExportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=exports.FORMATS, default="jsonl")
    aggregate = serializers.BooleanField(default=False)
