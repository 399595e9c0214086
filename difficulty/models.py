"""Models of the difficulty app (seed 002): difficulty datasets, their segments, systems and
score matrices, and DEC evaluations with their estimates.

The tables were created by the search app; ``Meta.db_table`` keeps their names, so moving the
models here copied no data (ADR 0010).
"""

from __future__ import annotations

import io

import numpy as np
from django.conf import settings
from django.db import models

from core.validators import validate_json_object, validate_string_list
from difficulty.import_report import report_lines
from difficulty.releases import judgments
from rounds.models import LeasedJob

# The migrations name the validators by these older paths.
_validate_string_list = validate_string_list
_validate_json_object = validate_json_object


def matrix_to_bytes(matrix: np.ndarray) -> bytes:
    """A float64 matrix as ``.npy`` bytes (dtype and shape travel with it; never pickled)."""
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(matrix, dtype=np.float64), allow_pickle=False)
    return buffer.getvalue()


def matrix_from_bytes(data: bytes | memoryview) -> np.ndarray:
    return np.load(io.BytesIO(bytes(data)), allow_pickle=False)


# Extra fields that record where each human score came from — a dataset built from a campaign
# keeps the item ids and how many judgments were averaged, WMT's files the judgments and their
# count: numbers (or the scores themselves), but no one's estimate of difficulty.
SCORE_PROVENANCE_FIELDS = frozenset({"item_ids", "n_annotations", "annotations"})


class DifficultyDataset(models.Model):
    """Source segments × systems × human scores, in one or more language pairs (seed 002 §3).

    Immutable once written: the rows and the per-language-pair score matrices are created in one
    transaction by the importer (or the campaign builder) and never edited, so the matrices can
    stay the fast path for evaluation while the segment rows serve browsing.
    """

    class Origin(models.TextChoices):
        IMPORT = "import", "Imported file"
        CAMPAIGN = "campaign", "Annotation campaign"

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.IMPORT)
    source_file_name = models.CharField(max_length=255, blank=True)
    # The campaign a dataset was built from, by id and name: the dataset is a snapshot that
    # outlives the campaign.
    source_campaign_id = models.PositiveBigIntegerField(null=True, blank=True)
    source_campaign_name = models.CharField(max_length=200, blank=True)
    # The rule that marked systems as human references at import: {"names": [...],
    # "prefixes": [...]} (case-insensitive prefixes).
    reference_rule = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    extra_fields = models.JSONField(default=list, blank=True, validators=[validate_string_list])
    # What the importer read from elsewhere, chose, or let through rather than refuse a released
    # file, e.g. {"language_pair_from_file_name": "en-de", "unbalanced_mark_rows": 1,
    # "unbalanced_mark_lines": [5312]} for a Google MQM TSV; difficulty/import_report.py says it
    # in words for every release.
    import_report = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    # The human score of a flawless translation, for %Perfect (seed 002 Eq. 4): 100 on ESA's
    # 0–100 scale; 0 for raw MQM penalties.
    perfect_score = models.FloatField(default=100.0)
    n_segments = models.PositiveIntegerField(default=0)
    n_language_pairs = models.PositiveIntegerField(default=0)
    n_systems = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # Created by search before difficulty became an app (ADR 0010): same tables.
        db_table = "search_difficultydataset"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name

    def is_metric_field(self, field: str) -> bool:
        """Whether ``metric:<field>`` can mean a score here (provenance fields cannot)."""
        return field not in SCORE_PROVENANCE_FIELDS

    def import_report_lines(self) -> list[str]:
        """The import report in words, as the command, the page and the job summary say it."""
        return report_lines(self.import_report, self.source_file_name)


class DifficultyLanguagePair(models.Model):
    """One language pair of a dataset, with its compact human-score matrix.

    ``scores`` holds a float64 ``.npy`` matrix: row ``i`` is the segment with ``row == i``,
    column ``j`` the system with ``column == j``, NaN where that system has no score. A 10k × 20
    pair is 1.6 MB and loads in one query, which keeps DEC over many pairs fast.
    """

    dataset = models.ForeignKey(
        DifficultyDataset, on_delete=models.CASCADE, related_name="language_pairs"
    )
    code = models.CharField(max_length=40)
    src_lang = models.CharField(max_length=16)
    tgt_lang = models.CharField(max_length=16)
    n_segments = models.PositiveIntegerField(default=0)
    scores = models.BinaryField()
    # The individual judgments behind the matrix's means, where the release has them (WMT
    # crowd DA, Google's MQM raters): a ``.npy`` table (difficulty.releases.judgments: row,
    # column, annotator, raw, z, repeat), empty when there are none. Read through
    # ``selectors.judgments_by_system``; WMT21–23 ranked systems on these, not on the means.
    judgments = models.BinaryField(default=b"", blank=True)
    judgment_annotators = models.JSONField(
        default=list, blank=True, validators=[validate_string_list]
    )
    n_judgments = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # Created by search before difficulty became an app (ADR 0010): same tables.
        db_table = "search_difficultylanguagepair"
        ordering = ["dataset", "code"]
        constraints = [
            # One pair per code: evaluation and the detail page look pairs up by (dataset, code).
            models.UniqueConstraint(
                fields=["dataset", "code"], name="search_difficulty_lp_unique_code"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.dataset} {self.code}"

    def score_matrix(self) -> np.ndarray:
        return matrix_from_bytes(self.scores)

    def judgment_table(self) -> np.ndarray:
        """The individual judgments (``difficulty.releases.judgments.JUDGMENT_DTYPE``)."""
        return judgments.table_from_bytes(self.judgments)


class DifficultySystem(models.Model):
    """A translator (MT system or human) of one language pair: one column of its matrix."""

    language_pair = models.ForeignKey(
        DifficultyLanguagePair, on_delete=models.CASCADE, related_name="systems"
    )
    name = models.CharField(max_length=200)
    column = models.PositiveIntegerField()
    # Human reference translators are left out of evaluation by default (seed 002 evaluates
    # the MT systems' difficulty; references are listed but not averaged in).
    is_reference = models.BooleanField(default=False)
    n_scored = models.PositiveIntegerField(default=0)
    mean_score = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # Created by search before difficulty became an app (ADR 0010): same tables.
        db_table = "search_difficultysystem"
        ordering = ["language_pair", "column"]
        constraints = [
            # Columns are read in order to line names up with matrix columns.
            models.UniqueConstraint(
                fields=["language_pair", "column"], name="search_difficulty_system_unique_column"
            ),
            models.UniqueConstraint(
                fields=["language_pair", "name"], name="search_difficulty_system_unique_name"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class DifficultySegment(models.Model):
    """One source segment of one language pair, as imported (every extra field kept)."""

    dataset = models.ForeignKey(
        DifficultyDataset, on_delete=models.CASCADE, related_name="segments"
    )
    language_pair = models.ForeignKey(
        DifficultyLanguagePair, on_delete=models.CASCADE, related_name="segments"
    )
    row = models.PositiveIntegerField()
    line_number = models.PositiveIntegerField(default=0)
    segment_key = models.CharField(max_length=100, blank=True)
    doc_id = models.CharField(max_length=255, blank=True)
    domain = models.CharField(max_length=100, blank=True)
    source = models.TextField()
    # sha256 of (source language, source text): the same source across language pairs, which is
    # what "oracle-src" averages over and what source-only estimators compute once.
    source_key = models.CharField(max_length=64)
    reference = models.TextField(blank=True)
    translations = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    scores = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    extra = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # Created by search before difficulty became an app (ADR 0010): same tables.
        db_table = "search_difficultysegment"
        ordering = ["language_pair", "row"]
        constraints = [
            # Row i of the pair's score matrix is exactly one segment (evaluation reads by row).
            models.UniqueConstraint(
                fields=["language_pair", "row"], name="search_difficulty_segment_unique_row"
            ),
        ]
        indexes = [
            # Oracle-src and source-only estimators group a dataset's segments by source.
            models.Index(fields=["dataset", "source_key"], name="search_dseg_source_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.language_pair.code} #{self.row}"


class DifficultyEvaluation(LeasedJob):
    """Estimators compared on a dataset with DEC and hardest-subset selection; kept for later.

    Run as a chain of short Celery rounds (or in the foreground by ``evaluate_difficulty``):
    the row is the source of truth: ``state`` records which units are done, estimates are
    stored per unit, and ``results`` holds the final tables.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    ACTIVE = (Status.QUEUED, Status.RUNNING)
    ENDED = (Status.DONE, Status.FAILED, Status.CANCELLED)
    SUCCEEDED = (Status.DONE,)

    dataset = models.ForeignKey(
        DifficultyDataset, on_delete=models.CASCADE, related_name="evaluations"
    )
    estimators = models.JSONField(validators=[validate_string_list])
    subset_fraction = models.FloatField(default=0.25)
    seed = models.BigIntegerField(default=0)
    n_bootstrap = models.PositiveIntegerField(default=1000)
    include_references = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    state = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    results = models.JSONField(default=dict, blank=True, validators=[validate_json_object])

    class Meta:
        # Created by search before difficulty became an app (ADR 0010): same tables.
        db_table = "search_difficultyevaluation"
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(subset_fraction__gt=0) & models.Q(subset_fraction__lte=1),
                name="search_difficulty_eval_subset_fraction_range",
            ),
        ]

    def __str__(self) -> str:
        return f"Evaluation {self.pk} of {self.dataset}"

    @property
    def progress_percent(self) -> int:
        if self.status == self.Status.DONE:
            return 100
        if not self.progress_total:
            return 0
        return min(100, round(100 * self.progress_done / self.progress_total))


class DifficultyEstimate(models.Model):
    """Scores one estimator gave one language pair (or a chunk of it) during an evaluation.

    ``values`` is a float64 ``.npy`` array: per segment row ``(n,)`` or per cell ``(n, systems)``.
    Engine estimators are called in chunks over the pair's distinct sources (in order of first
    row); their ``values`` are per distinct source and ``offset`` is the chunk's first one.
    """

    evaluation = models.ForeignKey(
        DifficultyEvaluation, on_delete=models.CASCADE, related_name="estimates"
    )
    estimator = models.CharField(max_length=200)
    language_pair = models.ForeignKey(
        DifficultyLanguagePair, on_delete=models.CASCADE, related_name="+"
    )
    offset = models.PositiveIntegerField(default=0)
    values = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # Created by search before difficulty became an app (ADR 0010): same tables.
        db_table = "search_difficultyestimate"
        ordering = ["evaluation", "estimator", "language_pair", "offset"]
        constraints = [
            # A redelivered round must not store a unit twice; rounds look units up by this key.
            models.UniqueConstraint(
                fields=["evaluation", "estimator", "language_pair", "offset"],
                name="search_difficulty_estimate_unique_unit",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.estimator} on {self.language_pair_id} from {self.offset}"

    def array(self) -> np.ndarray:
        return matrix_from_bytes(self.values)
