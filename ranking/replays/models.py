"""A replay run: allocation policies replayed over many seeds on one dataset, kept as a job.

``start_replay`` reads the dataset once into a snapshot on the row: the recorded scores
(``judgments``, systems × segments × raters, rows following ``systems``) and in ``state`` the
checkpoint budgets, the full-data reference (computed by round 0) and every finished
(policy, seed) trace. A round replays every policy over one chunk of seeds; ``items_done`` counts
the (policy, seed) runs; ``result`` holds the curves and the summary once the last round is in.
"""

from __future__ import annotations

import numpy as np
from django.db import models

from core.validators import validate_json_object, validate_string_list
from difficulty.models import matrix_from_bytes, matrix_to_bytes
from rounds.models import CountedJob


class ReplayGoal(models.TextChoices):
    TOP = "top", "The top cluster"
    ADJACENT = "adjacent", "Every adjacent pair"
    FULL = "full", "The full ranking"


class ReplayRun(CountedJob):
    """Policies × seeds replayed on one dataset pair (its human scores, fully crossed)."""

    Goal = ReplayGoal
    # What __str__ and the pages call a run without a name ("Replay 3").
    untitled = "Replay"

    name = models.CharField(max_length=200)
    dataset = models.ForeignKey(
        "difficulty.DifficultyDataset", on_delete=models.CASCADE, related_name="replays"
    )
    # "src-tgt"; "" when the dataset has a single language pair.
    language_pair = models.CharField(max_length=40, blank=True)
    # "human" (one score a cell), "raw" or "z" (one rater's score a judgment).
    score = models.CharField(max_length=200, default="human")
    policies = models.JSONField(default=list, validators=[validate_string_list])
    goal = models.CharField(max_length=10, choices=ReplayGoal.choices, default=ReplayGoal.TOP)
    n_seeds = models.PositiveIntegerField(default=20)
    n_checkpoints = models.PositiveIntegerField(default=40)
    batch_size = models.PositiveIntegerField(default=15)
    n_resamples = models.PositiveIntegerField(default=200)
    alpha = models.FloatField(default=0.05)
    tau_threshold = models.FloatField(default=0.9)

    systems = models.JSONField(default=list, blank=True, validators=[validate_string_list])
    judgments = models.BinaryField(default=b"", blank=True)
    state = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    result = models.JSONField(default=dict, blank=True, validators=[validate_json_object])

    class Meta(CountedJob.Meta):
        constraints = [
            models.CheckConstraint(
                condition=models.Q(alpha__gt=0) & models.Q(alpha__lt=1),
                name="replay_alpha_range",
            ),
        ]

    def __str__(self) -> str:
        return self.name or f"{self.untitled} {self.pk}"

    def not_done_reason(self) -> str:
        """Why the curves cannot be drawn yet ("" once the run is finished)."""
        if self.status == self.Status.FINISHED:
            return ""
        return f"the replay is {self.status}; its curves exist once it is finished"

    def judgment_cube(self) -> np.ndarray:
        return matrix_from_bytes(self.judgments)

    def set_judgment_cube(self, cube: np.ndarray) -> None:
        self.judgments = matrix_to_bytes(cube)
