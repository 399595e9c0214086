"""Bandit search runs and their pulls (seed 000)."""

from __future__ import annotations

from django.db import models

from core.validators import validate_json_object
from search.bandit import default_choice
from search.models.budget import BudgetedJob
from search.models.topics import TextSample, Topic, TopicTree


class SearchRun(BudgetedJob):
    """A fixed-budget best-arm search over a tree's leaves, run by workers in short rounds."""

    class Sampler(models.TextChoices):
        CORPUS = "corpus", "Imported corpus"
        LLM = "llm", "Chat engine (on demand)"
        SYNTHETIC = "synthetic", "Synthetic world"

    class HumanMode(models.TextChoices):
        OFF = "off", "Off"
        REPLACE = "replace", "Replace automatic difficulty"
        CALIBRATE = "calibrate", "Calibrate the estimator"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        PAUSED = "paused", "Paused"
        WAITING = "waiting", "Waiting for human scores"
        FINISHED = "finished", "Finished"
        CANCELLED = "cancelled", "Cancelled"
        FAILED = "failed", "Failed"

    # A round may claim the run (WAITING runs wait for people, not for a round).
    ACTIVE = (Status.QUEUED, Status.RUNNING)
    LEDGER_SCOPE = "search_run"

    name = models.CharField(max_length=200)
    tree = models.ForeignKey(
        TopicTree, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    sampler = models.CharField(max_length=16, choices=Sampler.choices)
    sampler_engine = models.ForeignKey(
        "engines.Engine", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    difficulty_engine = models.ForeignKey(
        "engines.Engine", on_delete=models.PROTECT, related_name="+"
    )
    src_lang = models.CharField(max_length=16, default="en")
    tgt_lang = models.CharField(max_length=16, blank=True)
    algorithm = models.CharField(max_length=32, default="default")
    params = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    # The concrete method the run was created with, {"policy": name, "params": {...}}: what
    # "default" resolved to at the time, so a later change of the default (docs/adr/0002,
    # 0028) never changes the method an existing run reports or repeats.
    method = models.JSONField(default=dict, blank=True)
    budget_pulls = models.PositiveIntegerField()
    k = models.PositiveIntegerField(default=10)
    seed = models.BigIntegerField(default=0)
    batch_size = models.PositiveIntegerField(default=10)
    human_mode = models.CharField(max_length=16, choices=HumanMode.choices, default=HumanMode.OFF)
    # {"rule": "top_k"|"fraction", "fraction", "max_items", "overlap", "timeout_hours"}.
    human_settings = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    campaign = models.ForeignKey(
        "annotation.Campaign", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    n_topics = models.PositiveIntegerField(default=0)
    pulls_done = models.PositiveIntegerField(default=0)
    # The bandit policy's state without per-topic rows (Policy.header_to_dict, plus "changes":
    # how many PolicyChanges rows follow, and "token": new at every save); see search.runs.state.
    policy_state = models.JSONField(default=dict, blank=True)
    calibration = models.JSONField(default=dict, blank=True)
    # One row per committed round: [pulls, top-k mean, oracle top-k mean or null, cost].
    history = models.JSONField(default=list, blank=True)
    result = models.JSONField(default=dict, blank=True)
    worker_memory_mb = models.FloatField(null=True, blank=True)
    human_deadline = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.name} (#{self.pk})"

    @property
    def progress(self) -> float:
        return min(1.0, self.pulls_done / self.budget_pulls) if self.budget_pulls else 1.0

    @property
    def resolved_algorithm(self) -> str:
        """The method the run uses: "default" names the one it resolved to at creation."""
        if self.algorithm != "default":
            return self.algorithm
        chosen = self.method.get("policy") or self.policy_state.get("policy")
        return f"default → {chosen or default_choice(self.n_topics, self.budget_pulls)[0]}"


class Pull(models.Model):
    """One pull of an arm: a text drawn for a topic, translated and scored."""

    class HumanStatus(models.TextChoices):
        NONE = "", "Not sent"
        SENT = "sent", "Sent to annotation"
        RECEIVED = "received", "Human score received"
        APPLIED = "applied", "Human score applied"

    run = models.ForeignKey(SearchRun, on_delete=models.CASCADE, related_name="pulls")
    round_index = models.PositiveIntegerField()
    slot = models.PositiveIntegerField()
    arm = models.PositiveIntegerField()
    topic = models.ForeignKey(
        Topic, null=True, blank=True, on_delete=models.PROTECT, related_name="pulls"
    )
    sample = models.ForeignKey(
        TextSample, null=True, blank=True, on_delete=models.PROTECT, related_name="pulls"
    )
    text = models.TextField()
    translations = models.JSONField(default=dict, blank=True)
    # [[translator, quality estimator, score], ...] for an artificial crowd.
    scores = models.JSONField(default=list, blank=True)
    automatic_difficulty = models.FloatField()
    human_difficulty = models.FloatField(null=True, blank=True)
    # Mean ESA score per translator once the pull's annotation items are complete.
    human_scores = models.JSONField(default=dict, blank=True)
    # What the bandit saw last: automatic, calibrated automatic, or human.
    difficulty = models.FloatField()
    human_status = models.CharField(
        max_length=16, choices=HumanStatus.choices, default=HumanStatus.NONE, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "round_index", "slot"]
        constraints = [
            models.UniqueConstraint(fields=["run", "round_index", "slot"], name="pull_unique_slot"),
        ]
        indexes = [
            models.Index(fields=["run", "arm"], name="pull_run_arm"),
            models.Index(fields=["run", "human_status"], name="pull_run_human"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} round {self.round_index} slot {self.slot}"


class PolicyChanges(models.Model):
    """The per-topic statistics one save of a run's bandit state changed (issue 19).

    A round writes the rows of the topics it pulled, not the whole state: replaying a run's
    rows in ``seq`` order over the totals in ``SearchRun.policy_state`` rebuilds its policy
    exactly (``search.bandit.policy_from_parts``). Written in the round's transaction, so a
    killed worker leaves no row of a round that did not commit.
    """

    run = models.ForeignKey(SearchRun, on_delete=models.CASCADE, related_name="+")
    seq = models.PositiveIntegerField()
    # ArmStats.take_changes: sorted topic ids (gaps) and their counts, sums, sums of squares
    # and pending pulls, plus first values kept since the previous row; zlib+base64 arrays.
    rows = models.JSONField()

    class Meta:
        # No default ordering: a model ordering makes every query of the table sort.
        constraints = [
            models.UniqueConstraint(fields=["run", "seq"], name="policy_changes_unique_seq"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} state changes {self.seq}"
