"""Serializers of the rankings API: the bounds are the new-ranking form's; what depends on the
source (language pair, score, enough systems) is checked by ``start_ranking``."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from annotation.models import Campaign
from challenge_sets.models import FrozenVersion
from difficulty.models import DifficultyDataset
from ranking import selectors
from ranking.models import SystemRanking
from ranking.services import MAX_RESAMPLES, MAX_SEED


class RankingCreateSerializer(serializers.Serializer):
    input_kind = serializers.ChoiceField(choices=SystemRanking.InputKind.choices)
    dataset = serializers.PrimaryKeyRelatedField(
        queryset=DifficultyDataset.objects.none(), required=False, allow_null=True,
        help_text="Difficulty dataset id (input_kind dataset).",
    )  # fmt: skip
    campaign = serializers.PrimaryKeyRelatedField(
        queryset=Campaign.objects.none(), required=False, allow_null=True,
        help_text="Annotation campaign id (input_kind campaign; ESA or MQM).",
    )  # fmt: skip
    version = serializers.PrimaryKeyRelatedField(
        queryset=FrozenVersion.objects.none(), required=False, allow_null=True,
        help_text="Frozen challenge-set version id (input_kind version or version_qe).",
    )  # fmt: skip
    language_pair = serializers.CharField(
        max_length=40, required=False, allow_blank=True, default="",
        help_text="e.g. zh-en; may be left out when the source has one pair.",
    )  # fmt: skip
    score = serializers.CharField(
        max_length=200, required=False, allow_blank=True, default="",
        help_text="human (default), z (a campaign's per-annotator z-scores), a dataset's extra "
        "field, or the QE engine's name for version_qe.",
    )  # fmt: skip
    include_references = serializers.BooleanField(required=False, default=False)
    test = serializers.ChoiceField(choices=SystemRanking.Test.choices, default="wilcoxon")
    pairs = serializers.ChoiceField(choices=SystemRanking.Pairs.choices, default="all")
    n_resamples = serializers.IntegerField(default=1000, min_value=1, max_value=MAX_RESAMPLES)
    alpha = serializers.FloatField(default=0.05, min_value=0.0001, max_value=0.5)
    holm = serializers.BooleanField(required=False, default=False)
    seed = serializers.IntegerField(default=0, min_value=0, max_value=MAX_SEED)
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        request = self.context.get("request")
        if request is None:  # the schema generator's instance
            return
        fields: Any = self.fields
        fields["dataset"].queryset = selectors.datasets_for_ranking(request.user)
        fields["campaign"].queryset = selectors.campaigns_for_ranking(request.user)
        fields["version"].queryset = selectors.versions_for_ranking(request.user)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A misspelt field ("test_name", "alpah") would silently take its default otherwise.
        if isinstance(self.initial_data, dict):
            unknown = sorted(set(self.initial_data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: "unknown field" for name in unknown})
        return attrs


class RankingErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Every problem on one line.")
    # A field named "errors": the metaclass pops declared fields, .errors stays the property.
    errors = serializers.DictField(  # type: ignore[assignment]
        child=serializers.CharField(), required=False, help_text="Field -> message."
    )


class RankingSerializer(serializers.ModelSerializer):
    """A ranking's input, test, status and (once done) its result, ``Ranking.as_dict()`` with
    the settings, the means' intervals and the input's notes."""

    source_name = serializers.SerializerMethodField()
    created_by: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    is_finished = serializers.BooleanField(read_only=True)
    links = serializers.SerializerMethodField()

    class Meta:
        model = SystemRanking
        fields = [
            "id", "name", "input_kind", "dataset", "campaign", "version", "source_name",
            "language_pair", "score", "include_references", "test", "pairs", "n_resamples",
            "alpha", "holm", "seed", "status", "is_finished", "cells_done", "cells_total", "error",
            "result", "created_by", "created_at", "started_at", "finished_at", "links",
        ]  # fmt: skip
        read_only_fields = fields

    def get_source_name(self, ranking: SystemRanking) -> str:
        return str(ranking.source)

    def get_links(self, ranking: SystemRanking) -> dict[str, str]:
        request = self.context["request"]
        page = request.build_absolute_uri(reverse("ranking:ranking_detail", args=[ranking.pk]))
        export = request.build_absolute_uri(reverse("ranking-export", args=[ranking.pk]))
        return {"page": page, **{fmt: f"{export}?as={fmt}" for fmt in EXPORT_FORMATS}}


class RankingListSerializer(RankingSerializer):
    class Meta(RankingSerializer.Meta):
        fields = [f for f in RankingSerializer.Meta.fields if f != "result"]
        read_only_fields = fields


EXPORT_FORMATS = ("csv", "latex", "typst", "json")
