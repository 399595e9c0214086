from __future__ import annotations

from rest_framework import serializers

from challenge_sets import exports, sources
from challenge_sets.models import ChallengeItem, ChallengeSet, FrozenVersion
from core.api_fields import optional_text
from core.uploads import validate_upload_size


class ChallengeSetSerializer(serializers.ModelSerializer):
    n_items = serializers.IntegerField(read_only=True)
    n_accepted = serializers.IntegerField(read_only=True)

    class Meta:
        model = ChallengeSet
        fields = ["id", "name", "slug", "description", "language_pairs", "licence",
                  "provenance_notes", "policy", "campaign", "n_items", "n_accepted",
                  "created_at", "updated_at"]  # fmt: skip
        read_only_fields = ["slug", "campaign", "created_at", "updated_at"]


class ChallengeSetCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = optional_text()
    language_pairs = serializers.ListField(child=serializers.CharField(), required=False)
    licence = serializers.CharField(required=False, default="CC-BY-4.0")
    provenance_notes = optional_text()
    policy = serializers.DictField(required=False, default=dict)


class ChallengeItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = ChallengeItem
        fields = ["id", "origin", "origin_ref", "src_lang", "tgt_lang", "source", "translations",
                  "question", "choices", "attested", "provenance", "automatic_difficulty",
                  "human", "human_difficulty", "agreement", "n_judgments", "validation",
                  "proposal", "proposal_reason", "status", "status_reason", "duplicate_of",
                  "similarity", "created_at", "updated_at"]  # fmt: skip
        read_only_fields = fields


class AddItemsSerializer(serializers.Serializer):
    # A field named "source": DRF's Field.source is popped by the serializer metaclass.
    source = serializers.CharField(  # type: ignore[assignment]
        help_text="A registered item source: "
        + ", ".join(source.name for source in sources.all_sources())
    )
    params = serializers.DictField(required=False, default=dict)
    file = serializers.FileField(
        required=False, validators=[validate_upload_size], help_text="jsonl: the file (multipart)"
    )


class DecideSerializer(serializers.Serializer):
    items = serializers.ListField(child=serializers.IntegerField(), allow_empty=False)
    status = serializers.ChoiceField(choices=["accepted", "rejected", "needs_review"])
    reason = optional_text()


class FrozenVersionSerializer(serializers.ModelSerializer):
    formats = serializers.SerializerMethodField(help_text="The export formats this version has.")

    class Meta:
        model = FrozenVersion
        fields = ["number", "n_items", "checksum", "annotations_format", "formats", "created_at"]
        read_only_fields = fields

    def get_formats(self, version: FrozenVersion) -> list[str]:
        return list(exports.formats_for(version))
