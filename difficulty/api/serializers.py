"""Serializers of the difficulty REST API (seed 002): what the endpoints read and return.

Request serializers only parse; the services (``difficulty.services``) validate what only they
can (the file's lines, the estimators against the dataset) and refuse with a message.
"""

from __future__ import annotations

import math
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api_fields import optional_text
from core.api_jobs import JobSerializer
from core.api_links import LinksField
from core.uploads import validate_upload_size
from difficulty import selectors
from difficulty.dataset_format import (
    DEFAULT_REFERENCE_NAMES,
    DEFAULT_REFERENCE_PREFIXES,
    ReferenceRule,
)
from difficulty.forms import validate_language_pair
from difficulty.models import DifficultyDataset, DifficultyEvaluation, DifficultySegment
from difficulty.services.dataset_files import DA_SCORE_KINDS, DATASET_FORMATS
from difficulty.services.evaluations import MAX_BOOTSTRAP


class FiniteFloatField(serializers.FloatField):
    """A float written as null when it is NaN or infinite (JSON has no such numbers)."""

    def to_representation(self, value: Any) -> float | None:  # type: ignore[override]
        # DRF's stub says str; a float field's JSON value is a number (or null here).
        number = float(value)
        return number if math.isfinite(number) else None


# --- Datasets ------------------------------------------------------------------------------


class DifficultyDatasetSerializer(serializers.ModelSerializer):
    """A dataset's description, origin and counts (list and retrieve)."""

    # Plain strings in the schema: enums named "origin"/"status" collide across apps.
    origin = serializers.CharField(
        read_only=True, help_text=f"One of: {', '.join(DifficultyDataset.Origin.values)}."
    )
    created_by: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    n_evaluations = serializers.IntegerField(read_only=True)
    links = LinksField(
        page="difficulty:dataset_detail",
        segments="difficulty-dataset-segments",
        scores_svg="difficulty:dataset_scores_plot",
    )

    class Meta:
        model = DifficultyDataset
        fields = [
            "id", "name", "description", "origin", "source_file_name", "source_campaign_id",
            "source_campaign_name", "reference_rule", "extra_fields", "import_report",
            "perfect_score", "n_segments", "n_language_pairs", "n_systems", "n_evaluations",
            "created_by", "created_at", "updated_at", "links",
        ]  # fmt: skip
        read_only_fields = fields


class DifficultySystemSerializer(serializers.Serializer):
    name = serializers.CharField()
    column = serializers.IntegerField()
    is_reference = serializers.BooleanField(
        help_text="A human reference translator: left out of evaluation by default."
    )
    n_scored = serializers.IntegerField()
    mean_score = FiniteFloatField(allow_null=True)


class DifficultyLanguagePairSerializer(serializers.Serializer):
    """One row of ``dataset_overview``: a pair's size, systems and evaluated cells' scores."""

    code = serializers.CharField(source="language_pair.code")
    src_lang = serializers.CharField(source="language_pair.src_lang")
    tgt_lang = serializers.CharField(source="language_pair.tgt_lang")
    n_segments = serializers.IntegerField(source="language_pair.n_segments")
    n_evaluated = serializers.IntegerField(help_text="Systems evaluated (references left out).")
    n_references = serializers.IntegerField()
    n_cells = serializers.IntegerField(help_text="Scored cells of the evaluated systems.")
    n_judgments = serializers.IntegerField(
        source="language_pair.n_judgments",
        help_text="Individual judgments kept beside the means (WMT DA, Google MQM raters).",
    )
    avg_score = FiniteFloatField(allow_null=True)
    pct_perfect = FiniteFloatField(allow_null=True)
    systems = DifficultySystemSerializer(many=True)


class EstimatorOptionSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    available = serializers.BooleanField()
    reason = serializers.CharField(help_text="Why it is unavailable (empty when available).")


class DifficultyDatasetDetailSerializer(DifficultyDatasetSerializer):
    """One dataset with its language pairs and systems, and the estimators it can be evaluated
    with."""

    language_pairs = serializers.SerializerMethodField()
    estimator_options = serializers.SerializerMethodField()

    class Meta(DifficultyDatasetSerializer.Meta):
        fields = [*DifficultyDatasetSerializer.Meta.fields, "language_pairs", "estimator_options"]
        read_only_fields = fields

    @extend_schema_field(DifficultyLanguagePairSerializer(many=True))
    def get_language_pairs(self, dataset: DifficultyDataset) -> list[dict]:
        overview = selectors.dataset_overview(dataset)
        return list(DifficultyLanguagePairSerializer(overview, many=True).data)

    @extend_schema_field(EstimatorOptionSerializer(many=True))
    def get_estimator_options(self, dataset: DifficultyDataset) -> list[dict]:
        options = selectors.estimator_options(dataset)
        return list(EstimatorOptionSerializer(options, many=True).data)


class DifficultySegmentSerializer(serializers.ModelSerializer):
    language_pair = serializers.CharField(source="language_pair.code", read_only=True)
    scores = serializers.DictField(
        child=FiniteFloatField(allow_null=True), read_only=True, help_text="{system: score}"
    )
    translations = serializers.DictField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = DifficultySegment
        fields = [
            "id", "language_pair", "row", "line_number", "segment_key", "doc_id", "domain",
            "source", "reference", "translations", "scores", "extra",
        ]  # fmt: skip
        read_only_fields = fields


class _ReferenceFields(serializers.Serializer):
    """Which systems are human references, as the pages' forms take it: comma-separated."""

    reference_systems = optional_text(
        ", ".join(DEFAULT_REFERENCE_NAMES),
        help_text="Comma-separated system names that are human references.",
    )
    reference_prefixes = optional_text(
        ", ".join(DEFAULT_REFERENCE_PREFIXES),
        help_text="Comma-separated prefixes (any case) that mark references; empty for none.",
    )

    def reference_rule(self) -> ReferenceRule:
        data = self.validated_data
        return ReferenceRule.from_text(data["reference_systems"], data["reference_prefixes"])


class DatasetImportSerializer(_ReferenceFields):
    """An upload in any of the dataset formats, as the upload page takes it."""

    name = serializers.CharField(max_length=200)
    description = optional_text()
    file = serializers.FileField(
        validators=[validate_upload_size],
        help_text="WMT-style JSONL (langs, src, tgt{system}, scores{system}; other fields kept), "
        "a Google MQM TSV (one row per error per rater) or Google's .tar.gz of one, an "
        "mt-metrics-eval test set as a .tar.gz or .zip, or a WMT DA release (its means file, "
        "or a .zip / .tar.gz with its judgments).",
    )
    format = serializers.ChoiceField(
        choices=list(DATASET_FORMATS),
        default="auto",
        help_text="auto recognises the file from line 1, an archive from its files (else the "
        "name); a file that looks like another format than the one given is refused naming it.",
    )
    langs = optional_text(
        max_length=40,
        validators=[validate_language_pair],
        help_text="Language pair of a Google MQM TSV, e.g. en-de (default: read from a name "
        "like mqm_ted_ende.tsv); JSONL lines name their own; in an mt-metrics-eval or WMT DA "
        "release, import only this pair (default: all).",
    )
    human_score = optional_text(
        max_length=100,
        help_text="mt-metrics-eval: the human score to import (mqm, wmt, wmt-z, ...; default: "
        "the only one; a 400 lists those found).",
    )
    test_set = optional_text(
        max_length=100,
        help_text="mt-metrics-eval: the test set of an archive holding several.",
    )
    da_score = serializers.ChoiceField(
        choices=list(DA_SCORE_KINDS),
        default="z",
        help_text="WMT DA: the per-segment means to import as scores.",
    )

    def release_choices(self) -> dict[str, str]:
        data = self.validated_data
        return {
            "file_format": data["format"],
            "language_pair": data["langs"],
            "human_score": data["human_score"].strip(),
            "test_set": data["test_set"].strip(),
            "score_kind": data["da_score"],
        }

    perfect_score = serializers.FloatField(
        default=100.0, help_text="Human score of a flawless translation (ESA: 100)."
    )


class DatasetFromCampaignSerializer(_ReferenceFields):
    campaign = serializers.PrimaryKeyRelatedField(
        queryset=selectors.source_campaigns(), help_text="An ESA or MQM annotation campaign."
    )
    name = serializers.CharField(max_length=200)
    description = optional_text()


class DifficultyErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    # A field named "errors": the metaclass pops declared fields, .errors stays the property.
    errors = serializers.ListField(  # type: ignore[assignment]
        child=serializers.CharField(),
        required=False,
        help_text="Every refused line of a file, as 'line N: reason'.",
    )


# --- Evaluations ---------------------------------------------------------------------------


class EvaluationProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(source="progress_done")
    total = serializers.IntegerField(source="progress_total")
    percent = serializers.IntegerField(source="progress_percent")


class EvaluationSettingsSerializer(serializers.Serializer):
    subset_fraction = serializers.FloatField()
    seed = serializers.IntegerField()
    n_bootstrap = serializers.IntegerField()
    include_references = serializers.BooleanField()


class DifficultyEvaluationSerializer(JobSerializer):
    """An evaluation's estimators, settings, status and progress (no results: see results/)."""

    dataset_name = serializers.CharField(source="dataset.name", read_only=True)
    estimators = serializers.ListField(child=serializers.CharField(), read_only=True)
    settings = EvaluationSettingsSerializer(source="*", read_only=True)
    progress = EvaluationProgressSerializer(source="*", read_only=True)
    is_finished = serializers.BooleanField(read_only=True)
    created_by: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    links = LinksField(
        page="difficulty:evaluation_detail",
        results="difficulty-evaluation-results",
        chart_svg="difficulty:evaluation_plot",
    )

    class Meta:
        model = DifficultyEvaluation
        fields = [
            "id", "dataset", "dataset_name", "estimators", "settings", "status", "progress",
            "is_finished", "error", "created_by", "created_at", "started_at", "finished_at",
            "links",
        ]  # fmt: skip
        read_only_fields = fields


class EvaluationCreateSerializer(serializers.Serializer):
    """A new evaluation; the bounds are the evaluate form's."""

    dataset = serializers.PrimaryKeyRelatedField(queryset=DifficultyDataset.objects.none())
    estimators = serializers.ListField(
        child=serializers.CharField(max_length=200),
        allow_empty=False,
        help_text="Estimator names, e.g. length, rarity, oracle-src, metric:comet, "
        "llm-judge:<engine>, crowd:<engine>, learned:<engine>; see a dataset's estimator_options.",
    )
    subset_fraction = serializers.FloatField(default=0.25, min_value=0.01, max_value=1.0)
    seed = serializers.IntegerField(default=0, min_value=0, max_value=2**62)
    n_bootstrap = serializers.IntegerField(default=1000, min_value=0, max_value=MAX_BOOTSTRAP)
    include_references = serializers.BooleanField(default=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        request = self.context.get("request")
        if request is not None:
            self.fields["dataset"].queryset = selectors.datasets_for_user(request.user)


# Documentation of ``DifficultyEvaluation.results`` (written by ``services._Run._finish``).


class EstimatorResultSerializer(serializers.Serializer):
    rank = serializers.IntegerField(
        allow_null=True,
        required=False,
        help_text="Cluster of statistical significance (1 = best; see significance); null with "
        "one estimator, an undefined DEC, or where the clusters were left out.",
    )
    dec = FiniteFloatField(allow_null=True, help_text="Difficulty estimation correlation.")
    dec_per_lp = serializers.DictField(child=FiniteFloatField(allow_null=True))
    pearson = FiniteFloatField(allow_null=True)
    avg_score = FiniteFloatField(allow_null=True, help_text="Hardest subset's mean human score.")
    pct_perfect = FiniteFloatField(
        allow_null=True, help_text="Hardest subset's % of perfect scores."
    )


class EstimatorDetailSerializer(serializers.Serializer):
    description = serializers.CharField()
    group = serializers.CharField()
    dec_ci = serializers.ListField(
        child=FiniteFloatField(allow_null=True),
        allow_null=True,
        help_text="Bootstrap percentile interval of DEC at settings.confidence.",
    )
    n_bootstrap = serializers.IntegerField()
    pearson_per_lp = serializers.DictField(child=FiniteFloatField(allow_null=True))
    per_system = serializers.DictField(child=serializers.DictField())
    n_pairs = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()),
        help_text="Scored pairs per language pair and system.",
    )
    undefined = serializers.ListField(child=serializers.ListField())
    subset_per_lp = serializers.DictField(child=serializers.DictField())


class RandomSelectionSerializer(serializers.Serializer):
    avg_score = FiniteFloatField(allow_null=True)
    pct_perfect = FiniteFloatField(allow_null=True)
    avg_score_interval = serializers.ListField(child=FiniteFloatField(allow_null=True))
    pct_perfect_interval = serializers.ListField(child=FiniteFloatField(allow_null=True))
    runs = serializers.IntegerField()
    confidence = serializers.FloatField()


_P_VALUES_HELP = (
    "p_values[i][j] (i < j; null elsewhere): the p-value that order[j]'s DEC is at least "
    "order[i]'s."
)


class EstimatorRanksSerializer(serializers.Serializer):
    order = serializers.ListField(
        child=serializers.CharField(),
        help_text="Estimators by decreasing DEC (undefined left out).",
    )
    dec = serializers.ListField(child=serializers.FloatField())
    ranks = serializers.ListField(child=serializers.IntegerField(), help_text="In that order.")
    p_values = serializers.ListField(
        child=serializers.ListField(child=FiniteFloatField(allow_null=True)),
        help_text=_P_VALUES_HELP,
    )


class SignificanceSerializer(serializers.Serializer):
    """Seed 002 Tables 7–8: clusters of significance from PERM-BOTH tests of every pair of
    estimators (Deutsch et al., 2021), ranked as Freitag et al. (2024). When the tests were
    left out, only ``method`` and ``skipped`` (why) are present."""

    method = serializers.CharField(help_text="PERM-BOTH")
    skipped = serializers.CharField(required=False)
    follows = serializers.CharField(required=False)
    n_resamples = serializers.IntegerField(required=False, help_text="At most, per pair.")
    early_stopping = serializers.DictField(
        required=False,
        help_text="A test stops after a block of block_size resamples once every p-value "
        "(overall and per language pair) is below `below` or above `above`.",
    )
    alpha = serializers.FloatField(required=False)
    seed = serializers.IntegerField(required=False)
    order = serializers.ListField(child=serializers.CharField(), required=False)
    dec = serializers.ListField(child=serializers.FloatField(), required=False)
    ranks = serializers.ListField(child=serializers.IntegerField(), required=False)
    p_values = serializers.ListField(
        child=serializers.ListField(child=FiniteFloatField(allow_null=True)),
        required=False,
        help_text=_P_VALUES_HELP,
    )
    resamples_used = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(allow_null=True)),
        required=False,
    )
    per_lp = serializers.DictField(child=EstimatorRanksSerializer(), required=False)


class EvaluationResultsSerializer(serializers.Serializer):
    """A finished evaluation's results, as the page's JSON download has them."""

    estimators = serializers.DictField(child=EstimatorResultSerializer())
    dataset = serializers.DictField()
    settings = serializers.DictField()
    random_selection = RandomSelectionSerializer()
    details = serializers.DictField(child=EstimatorDetailSerializer())
    significance = SignificanceSerializer(
        allow_null=True,
        required=False,
        help_text="Null with one estimator (or for an evaluation made before clusters existed).",
    )


class EvaluationStateErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    status = serializers.CharField()
