"""A discrimination analysis: how well a subset separates MT systems, kept as a job.

The subject is a frozen challenge-set version, a difficulty dataset's hardest segments by one
estimator (or by the human-score oracle), or an MT-breaker comparison. ``start_analysis`` reads
it once into a snapshot kept on the row: the full set's scores (``scores``, systems × segments,
rows following ``systems``) and in ``state`` the subsets (segment columns, hardest first for a
curve), the per-segment difficulty and the notes. Rounds then compute the full set's ranking and
one subset size each (``ranking.subsets.services``); ``result`` holds what came out.
"""

from __future__ import annotations

from django.db import models

from core.validators import validate_json_object, validate_string_list
from ranking.models import RankingJob, Test, optional_input
from ranking.validators import validate_fractions


class SubjectKind(models.TextChoices):
    VERSION = "version", "Challenge-set version"
    HARDEST = "hardest", "Hardest segments of a difficulty dataset"
    BREAKER = "breaker", "MT-breaker comparison"


class DiscriminationAnalysis(RankingJob):
    SubjectKind = SubjectKind
    untitled = "Discrimination analysis"
    file_prefix = "discrimination"

    subject_kind = models.CharField(max_length=16, choices=SubjectKind.choices)
    version = optional_input("challenge_sets.FrozenVersion", related_name="+")
    dataset = optional_input("difficulty.DifficultyDataset", related_name="+")
    # The DEC evaluation whose estimator orders the segments (empty for the oracle started from
    # a dataset); its estimates are read when the analysis starts.
    evaluation = optional_input("difficulty.DifficultyEvaluation", related_name="+")
    # An estimator of the evaluation, or "oracle": hardest by the mean human score.
    estimator = models.CharField(max_length=200, blank=True)
    comparison = models.CharField(max_length=200, blank=True, db_index=True)
    # language_pair: a breaker comparison's target language (its runs' own, or a transfer's).
    # "human", or for a breaker comparison "qe" (the targets' and transfers' QE quality).
    score = models.CharField(max_length=16, default="human")
    test = models.CharField(max_length=16, choices=Test.choices, default=Test.PERMUTATION)
    n_random = models.PositiveIntegerField(default=20)
    fractions = models.JSONField(default=list, blank=True, validators=[validate_fractions])
    points_done = models.PositiveIntegerField(default=0)
    points_total = models.PositiveIntegerField(default=0)
    systems = models.JSONField(default=list, blank=True, validators=[validate_string_list])
    state = models.JSONField(default=dict, blank=True, validators=[validate_json_object])

    class Meta(RankingJob.Meta):
        verbose_name_plural = "discrimination analyses"
        constraints = [
            # Exactly the subject its kind reads: the job and the pages follow that link.
            models.CheckConstraint(
                condition=(
                    models.Q(
                        subject_kind="version",
                        version__isnull=False,
                        dataset__isnull=True,
                        evaluation__isnull=True,
                        comparison="",
                    )
                    | models.Q(
                        subject_kind="hardest",
                        version__isnull=True,
                        dataset__isnull=False,
                        comparison="",
                    )
                    & ~models.Q(estimator="")
                    | models.Q(
                        subject_kind="breaker",
                        version__isnull=True,
                        dataset__isnull=True,
                        evaluation__isnull=True,
                    )
                    & ~models.Q(comparison="")
                ),
                name="discrimination_subject_matches_kind",
            ),
            models.CheckConstraint(
                condition=models.Q(alpha__gt=0) & models.Q(alpha__lt=1),
                name="discrimination_alpha_range",
            ),
            models.CheckConstraint(
                condition=models.Q(n_random__gte=1), name="discrimination_n_random_positive"
            ),
        ]
        indexes = [
            # The DEC evaluation page's section: an evaluation's latest analysis per estimator.
            models.Index(fields=["evaluation", "estimator", "-created_at"], name="disc_eval_idx"),
        ]

    @property
    def progress_counts(self) -> tuple[int, int]:
        return self.points_done, self.points_total
