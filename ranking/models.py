"""A ranking of MT systems with significance clusters (issue 41), kept as a background job.

The statistics are ``ranking.stats`` (pure); this row holds what was ranked (the input, the score
and the language pair), how (the test and its parameters), the job's state on the round kernel
(``rounds.LeasedJobKind``) and what came out (``Ranking.as_dict()`` plus the settings).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.db import models

from core.validators import validate_json_object, validate_string_list
from difficulty.models import matrix_from_bytes, matrix_to_bytes
from rounds.models import RoundJob


def optional_input(to: str, related_name: str) -> models.ForeignKey[Any, Any]:
    """A link to one of the inputs a job may read: null unless the job's kind reads it (a check
    constraint says which); deleting the input deletes the jobs that read it."""
    return models.ForeignKey(
        to, null=True, blank=True, on_delete=models.CASCADE, related_name=related_name
    )


class RankingStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class InputKind(models.TextChoices):
    DATASET = "dataset", "Difficulty dataset"
    CAMPAIGN = "campaign", "Annotation campaign"
    VERSION = "version", "Challenge-set version (human scores)"
    VERSION_QE = "version_qe", "Challenge-set version (QE engine)"


class Test(models.TextChoices):
    WILCOXON = "wilcoxon", "Wilcoxon signed-rank (WMT24–25)"
    RANKSUM = "ranksum", "Wilcoxon rank-sum (WMT21–23)"
    PERMUTATION = "permutation", "Paired permutation (PERM-BOTH)"
    BOOTSTRAP = "bootstrap", "Paired bootstrap"


class Pairs(models.TextChoices):
    ALL = "all", "All pairs"
    ADJACENT = "adjacent", "Adjacent systems only"


class RankingJob(RoundJob):
    """Abstract: a job that ranks systems with a significance test (a ranking, a discrimination
    analysis): its statuses, its test's parameters, the score matrix it read and its result.

    ``scores`` is a float64 ``.npy`` matrix (systems × segments, NaN where a system has no
    score). A subclass names its progress counters in ``progress_counts``.
    """

    Status = RankingStatus
    ACTIVE = (RankingStatus.QUEUED, RankingStatus.RUNNING)
    ENDED = (RankingStatus.DONE, RankingStatus.FAILED, RankingStatus.CANCELLED)
    SUCCEEDED = (RankingStatus.DONE,)
    Test = Test
    # What __str__ calls a job without a name ("Ranking 3"), and its files ("ranking-3.csv").
    untitled = "Ranking"
    file_prefix = "ranking"

    name = models.CharField(max_length=200)
    # "src-tgt"; "" when the input has a single language pair.
    language_pair = models.CharField(max_length=40, blank=True)
    n_resamples = models.PositiveIntegerField(default=1000)
    alpha = models.FloatField(default=0.05)
    seed = models.BigIntegerField(default=0)

    # The kernel's job fields (rounds.models.RoundJob), with the rankings' own statuses: a
    # ranking is "done", not "finished" (the pages and the API say so).
    status = models.CharField(
        max_length=10, choices=RankingStatus.choices, default=RankingStatus.QUEUED
    )
    scores = models.BinaryField(default=b"", blank=True)
    result = models.JSONField(default=dict, blank=True, validators=[validate_json_object])

    class Meta(RoundJob.Meta):
        abstract = True

    def __str__(self) -> str:
        return self.name or f"{self.untitled} {self.pk}"

    @property
    def progress_counts(self) -> tuple[int, int]:
        """(done, total) of what the job's rounds work through."""
        raise NotImplementedError

    @property
    def progress_percent(self) -> int:
        if self.status == self.Status.DONE:
            return 100
        done, total = self.progress_counts
        return min(100, round(100 * done / total)) if total else 0

    def not_done_reason(self) -> str:
        """Why the result cannot be read yet ("" once the job is done)."""
        if self.status == self.Status.DONE:
            return ""
        reason = f"the {self.untitled.lower()} is {self.status}; its result exists once it is done"
        return f"{reason} (error: {self.error})" if self.error else reason

    def score_matrix(self) -> np.ndarray:
        return matrix_from_bytes(self.scores)

    def set_score_matrix(self, matrix: np.ndarray) -> None:
        self.scores = matrix_to_bytes(matrix)


class SystemRanking(RankingJob):
    """Systems ranked on one input with one significance test.

    ``scores`` is the ranked input as a float64 ``.npy`` matrix (systems × segments, NaN where a
    system has no score; rows follow ``input_systems``): the ranking can be re-drawn or compared
    with a subset's ranking without reading the source again. A QE input fills it round by round
    (``cells_done`` of ``cells_total`` scored); other inputs are read in one round.
    """

    InputKind = InputKind
    Pairs = Pairs

    input_kind = models.CharField(max_length=16, choices=InputKind.choices)
    dataset = optional_input("difficulty.DifficultyDataset", related_name="rankings")
    campaign = optional_input("annotation.Campaign", related_name="+")
    version = optional_input("challenge_sets.FrozenVersion", related_name="rankings")
    # Which score: "human" (the input's human score), "z" (a campaign's per-annotator z-scores),
    # a dataset's per-system extra field, or for a QE input the QE engine's name.
    score = models.CharField(max_length=200, default="human")
    include_references = models.BooleanField(default=False)
    test = models.CharField(max_length=16, choices=Test.choices, default=Test.WILCOXON)
    pairs = models.CharField(max_length=10, choices=Pairs.choices, default=Pairs.ALL)
    holm = models.BooleanField(default=False)
    cells_done = models.PositiveIntegerField(default=0)
    cells_total = models.PositiveIntegerField(default=0)
    input_systems = models.JSONField(default=list, blank=True, validators=[validate_string_list])

    class Meta(RankingJob.Meta):
        constraints = [
            # Exactly the source its input kind reads: the job and the page follow that link.
            models.CheckConstraint(
                condition=(
                    models.Q(
                        input_kind="dataset",
                        dataset__isnull=False,
                        campaign__isnull=True,
                        version__isnull=True,
                    )
                    | models.Q(
                        input_kind="campaign",
                        dataset__isnull=True,
                        campaign__isnull=False,
                        version__isnull=True,
                    )
                    | models.Q(
                        input_kind__in=["version", "version_qe"],
                        dataset__isnull=True,
                        campaign__isnull=True,
                        version__isnull=False,
                    )
                ),
                name="ranking_input_matches_kind",
            ),
            models.CheckConstraint(
                condition=models.Q(alpha__gt=0) & models.Q(alpha__lt=1),
                name="ranking_alpha_range",
            ),
        ]

    @property
    def progress_counts(self) -> tuple[int, int]:
        return self.cells_done, self.cells_total

    @property
    def scope(self) -> str:
        """The engines ledger label of a QE input's calls (their cost is summed by it)."""
        return f"ranking:{self.pk}"

    @property
    def source(self) -> Any:
        """The dataset, campaign or frozen version this ranking reads."""
        return self.dataset or self.campaign or self.version


# Replay runs (issue 42) live in their own package.
from ranking.replays.models import ReplayRun  # noqa: E402, F401

# The discrimination analyses (issue 41, seed 000 App. A) live in their own package.
from ranking.subsets.models import DiscriminationAnalysis  # noqa: E402, F401
