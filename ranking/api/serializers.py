"""Serializers of the rankings and discrimination analyses APIs: the bounds are the forms';
what depends on the source or subject (language pair, score, enough systems) is checked by
``start_ranking`` and ``start_analysis``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from django.db.models import Model
from django.urls import reverse
from rest_framework import serializers

from annotation.models import Campaign
from challenge_sets.models import FrozenVersion
from core.api_fields import optional_text
from difficulty.models import DifficultyDataset, DifficultyEvaluation
from ranking import downloads, selectors
from ranking.models import SystemRanking
from ranking.services import MAX_RESAMPLES, MAX_SEED
from ranking.subsets import inputs as subject_inputs
from ranking.subsets import selectors as analysis_selectors
from ranking.subsets.models import DiscriminationAnalysis
from ranking.subsets.services import MAX_RANDOM


def optional_id(model: type[Model], help_text: str) -> Any:
    """An optional id of one of the ``model`` rows the user may pick (the serializer's
    ``sources`` sets which)."""
    return serializers.PrimaryKeyRelatedField(
        queryset=model._default_manager.none(),
        required=False,
        allow_null=True,
        help_text=help_text,
    )


class JobCreateSerializer(serializers.Serializer):
    """The body of a new ranking job (a ranking, an analysis, a replay): its sources' choices
    (``sources``: field -> the selector of what the user may pick), and no unknown field."""

    sources: ClassVar[dict[str, Callable[[Any], Any]]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        request = self.context.get("request")
        if request is None:  # the schema generator's instance: nothing is offered
            return
        fields: Any = self.fields
        for name, choices_for in self.sources.items():
            fields[name].queryset = choices_for(request.user)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A misspelt field ("test_name", "alpah") would silently take its default otherwise.
        if isinstance(self.initial_data, dict):
            unknown = sorted(set(self.initial_data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: "unknown field" for name in unknown})
        return attrs


class TestSettingsSerializer(JobCreateSerializer):
    """The body of a new job that runs a significance test: the test's settings and its name."""

    n_resamples = serializers.IntegerField(default=1000, min_value=1, max_value=MAX_RESAMPLES)
    alpha = serializers.FloatField(default=0.05, min_value=0.0001, max_value=0.5)
    seed = serializers.IntegerField(default=0, min_value=0, max_value=MAX_SEED)
    name = optional_text(max_length=200)


class RankingJobSerializer(serializers.ModelSerializer):
    """What every ranking job's detail adds to its fields: who started it, whether it ended,
    and its links (its page, and its result's export in each format)."""

    page_url: ClassVar[str]  # the page's URL name
    export_url: ClassVar[str]  # the export action's URL name

    created_by: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    is_finished = serializers.BooleanField(read_only=True)
    links = serializers.SerializerMethodField()

    def get_links(self, job: Any) -> dict[str, str]:
        request = self.context["request"]
        page = request.build_absolute_uri(reverse(self.page_url, args=[job.pk]))
        export = request.build_absolute_uri(reverse(self.export_url, args=[job.pk]))
        formats = downloads.formats(type(job))
        return {"page": page, **{fmt: f"{export}?as={fmt}" for fmt in formats}}


def without_result(fields: list[str]) -> list[str]:
    """A list's fields: the detail's but the result (it can be large)."""
    return [field for field in fields if field != "result"]


class RankingCreateSerializer(TestSettingsSerializer):
    sources = {
        "dataset": selectors.datasets_for_ranking,
        "campaign": selectors.campaigns_for_ranking,
        "version": selectors.versions_for_ranking,
    }

    input_kind = serializers.ChoiceField(choices=SystemRanking.InputKind.choices)
    dataset = optional_id(DifficultyDataset, "Difficulty dataset id (input_kind dataset).")
    campaign = optional_id(Campaign, "Annotation campaign id (input_kind campaign; ESA or MQM).")
    version = optional_id(
        FrozenVersion, "Frozen challenge-set version id (input_kind version or version_qe)."
    )
    language_pair = optional_text(
        max_length=40, help_text="e.g. zh-en; may be left out when the source has one pair."
    )
    score = optional_text(
        max_length=200,
        help_text="human (default), z (a campaign's per-annotator z-scores), a dataset's extra "
        "field, or the QE engine's name for version_qe.",
    )
    include_references = serializers.BooleanField(required=False, default=False)
    test = serializers.ChoiceField(choices=SystemRanking.Test.choices, default="wilcoxon")
    pairs = serializers.ChoiceField(choices=SystemRanking.Pairs.choices, default="all")
    holm = serializers.BooleanField(required=False, default=False)


class RankingSerializer(RankingJobSerializer):
    """A ranking's input, test, status and (once done) its result, ``Ranking.as_dict()`` with
    the settings, the means' intervals and the input's notes."""

    page_url = "ranking:ranking_detail"
    export_url = "ranking-export"
    source_name = serializers.SerializerMethodField()

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


class RankingListSerializer(RankingSerializer):
    class Meta(RankingSerializer.Meta):
        fields = without_result(RankingSerializer.Meta.fields)
        read_only_fields = fields


class AnalysisCreateSerializer(TestSettingsSerializer):
    sources = {
        "version": analysis_selectors.versions_for,
        "evaluation": analysis_selectors.evaluations_for,
        "dataset": analysis_selectors.datasets_for,
    }

    subject_kind = serializers.ChoiceField(choices=DiscriminationAnalysis.SubjectKind.choices)
    version = optional_id(FrozenVersion, "Frozen challenge-set version id (subject_kind version).")
    evaluation = optional_id(
        DifficultyEvaluation,
        "Finished DEC evaluation id whose estimator orders the segments (hardest).",
    )
    dataset = optional_id(
        DifficultyDataset, "Difficulty dataset id (hardest; may be left out with an evaluation)."
    )
    estimator = optional_text(
        max_length=200,
        help_text=f"An estimator of the evaluation, or {subject_inputs.ORACLE!r} (mean human "
        "score).",
    )
    comparison = optional_text(max_length=200, help_text="MT-breaker comparison name.")
    language_pair = optional_text(max_length=40)
    score = serializers.ChoiceField(choices=[subject_inputs.QE, subject_inputs.HUMAN],
                                    required=False, allow_blank=True, default="")  # fmt: skip
    test = serializers.ChoiceField(choices=DiscriminationAnalysis.Test.choices,
                                   default="permutation")  # fmt: skip
    n_random = serializers.IntegerField(default=20, min_value=2, max_value=MAX_RANDOM)
    fractions = serializers.ListField(
        child=serializers.FloatField(min_value=0.0001, max_value=1.0), required=False,
        min_length=1, max_length=20, help_text="Subset sizes as fractions (hardest only).",
    )  # fmt: skip


class AnalysisSerializer(RankingJobSerializer):
    """An analysis's subject, settings, status and (once done) its result."""

    page_url = "ranking:discrimination_detail"
    export_url = "discrimination-analysis-export"

    class Meta:
        model = DiscriminationAnalysis
        fields = [
            "id", "name", "subject_kind", "version", "dataset", "evaluation", "estimator",
            "comparison", "language_pair", "score", "test", "n_resamples", "n_random", "alpha",
            "seed", "fractions", "status", "is_finished", "points_done", "points_total",
            "systems", "error", "result", "created_by", "created_at", "finished_at", "links",
        ]  # fmt: skip
        read_only_fields = fields


class AnalysisListSerializer(AnalysisSerializer):
    class Meta(AnalysisSerializer.Meta):
        fields = without_result(AnalysisSerializer.Meta.fields)
        read_only_fields = fields
