"""MT-breaker runs (seed 001): one method on one set of seeds, its chains and their steps.

A run has one chain per item (a seed, or a slot for a seedless/zero-shot text); a chain has
one step per evaluated source: step 0 is the seed (or the LLM's first text), each later step
is the LLM's edit of the previous one (MT-breaker) or a fresh generation (Zeroshot (min)).
Every step is translated by the run's target(s) and scored by its QE engine(s); the chain's
selected step is the one with the lowest quality (ties: the earliest).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from core.validators import validate_json_object, validate_string_list
from rounds.models import RoundJob
from search.models.budget import BudgetedJob


class BreakerRun(BudgetedJob):
    class Method(models.TextChoices):
        SEEDS = "seeds", "Seeds"
        ZEROSHOT = "zeroshot", "Zeroshot"
        ZEROSHOT_HISTORY = "zeroshot_history", "Zeroshot (history)"
        ZEROSHOT_MIN = "zeroshot_min", "Zeroshot (min)"
        BREAKER_SEEDED = "breaker_seeded", "MT-breaker (seeded)"
        BREAKER_SEEDLESS = "breaker_seedless", "MT-breaker (seedless)"
        BREAKER_SEEDED_QE = "breaker_seeded_qe", "MT-breaker (seeded+QE)"
        BREAKER_SEEDLESS_QE = "breaker_seedless_qe", "MT-breaker (seedless+QE)"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        PAUSED = "paused", "Paused"
        FINISHED = "finished", "Finished"
        CANCELLED = "cancelled", "Cancelled"
        FAILED = "failed", "Failed"

    ACTIVE = (Status.QUEUED, Status.RUNNING)
    LEDGER_SCOPE = "breaker_run"

    name = models.CharField(max_length=200)
    # Runs started together by "compare methods" share this label (and their seeds).
    comparison = models.CharField(max_length=200, blank=True, db_index=True)
    method = models.CharField(max_length=32, choices=Method.choices)
    llm_engine = models.ForeignKey(
        "engines.Engine", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Engine names: several targets make the run "Multi" (seed 001 §3.3).
    targets = models.JSONField(default=list, validators=[validate_string_list])
    qe_engines = models.JSONField(default=list, validators=[validate_string_list])
    src_lang = models.CharField(max_length=16, default="en")
    tgt_lang = models.CharField(max_length=16)
    n_steps = models.PositiveIntegerField(default=10)
    k_generations = models.PositiveIntegerField(default=10)
    max_edit_share = models.FloatField(default=0.75)
    # Mean word count of the seed set: the length asked of seedless and zero-shot texts.
    target_words = models.PositiveIntegerField(default=30)
    max_parse_attempts = models.PositiveSmallIntegerField(default=3)
    # Zeroshot (history): chains generated per round (later ones see the earlier texts).
    history_batch = models.PositiveIntegerField(default=5)
    seed = models.BigIntegerField(default=0)
    # Where the seeds came from and how they were sampled ({"from", ..., "n", "sample_seed"}).
    seeds_from = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    steps_done = models.PositiveIntegerField(default=0)
    steps_total = models.PositiveIntegerField(default=0)
    # Seed 001 Fig. 2 after each round: [{"step", "mean", "running_min", "chains"}, ...].
    curves = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return f"{self.name} (#{self.pk})"

    @property
    def progress(self) -> float:
        return min(1.0, self.steps_done / self.steps_total) if self.steps_total else 1.0

    @property
    def is_multi(self) -> bool:
        return len(self.targets) > 1


class BreakerChain(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        STOPPED = "stopped", "Stopped (budget or cancel)"

    run = models.ForeignKey(BreakerRun, on_delete=models.CASCADE, related_name="chains")
    index = models.PositiveIntegerField()
    seed_text = models.TextField(blank=True)
    # {"origin": "search_run"|"topic_tree"|"dataset"|"jsonl", "ref", "source_url", "doc_id"}.
    seed_ref = models.JSONField(default=dict, blank=True, validators=[validate_json_object])
    target_words = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    error = models.TextField(blank=True)
    steps_done = models.PositiveIntegerField(default=0)
    selected_step = models.PositiveIntegerField(null=True, blank=True)
    selected_quality = models.FloatField(null=True, blank=True)
    selected_text = models.TextField(blank=True)
    # Mean over the run's targets of the human scores of the selected step (seed 001 §3.6):
    # what the automatic ``selected_quality`` becomes once people judged it; that stays.
    human_quality = models.FloatField(null=True, blank=True)
    # The TextSample the selected text became on export (origin "breaker").
    sample = models.ForeignKey(
        "search.TextSample", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="breaker_chain_unique_index"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} chain {self.index}"


class BreakerStep(models.Model):
    chain = models.ForeignKey(BreakerChain, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    source = models.TextField()
    # The LLM answer the source was read from (empty for a seed); rebuilds the chat history.
    llm_text = models.TextField(blank=True)
    parse_attempts = models.PositiveSmallIntegerField(default=0)
    translations = models.JSONField(default=dict, blank=True)  # {target: translation}
    qe = models.JSONField(default=dict, blank=True)  # {target: {qe engine: score}}
    quality = models.FloatField()  # mean over targets of the mean over QE engines
    # Human results beside the automatic ones (search/breaker/humans.py):
    # {system: {campaign id: {"protocol", "score", "judgments", "non_scorable", "categories"}}}.
    human = models.JSONField(default=dict, blank=True)
    # Translations written by people: {system ("Human", "Human 2"...): {"text", "campaign"}}.
    human_translations = models.JSONField(default=dict, blank=True)
    edit_share = models.FloatField(null=True, blank=True)  # against the previous step
    word_count = models.PositiveIntegerField(default=0)
    llm_cost = models.DecimalField(max_digits=16, decimal_places=8, default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["chain", "index"]
        constraints = [
            # A re-run round never writes a step twice (crash safety rests on this).
            models.UniqueConstraint(fields=["chain", "index"], name="breaker_step_unique_index"),
        ]

    def __str__(self) -> str:
        return f"chain {self.chain_id} step {self.index}"


class BreakerCampaign(models.Model):
    """An annotation campaign some of a run's selected texts were sent to (one row per run, so
    a comparison's campaign has one per method). Items point back only by their generic
    ``origin="breaker"`` and ``origin_ref`` (DESIGN.md §1); this row lets the run find them."""

    class Purpose(models.TextChoices):
        SCORE = "score", "Scoring"
        TRANSLATE = "translate", "Human translation"

    run = models.ForeignKey(BreakerRun, on_delete=models.CASCADE, related_name="human_campaigns")
    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="+")
    purpose = models.CharField(max_length=16, choices=Purpose.choices)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "created_at", "id"]
        constraints = [
            # The run page lists a run's campaigns once each.
            models.UniqueConstraint(fields=["run", "campaign"], name="breaker_campaign_unique"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} campaign {self.campaign_id}"


class BreakerStatistics(RoundJob):
    """Data-quality statistics of a run's selected texts (seed 001 §3.2, Table 2; ADR 0015).

    A one-round job on the round kernel: queued, claimed with a lease, computed (engine calls
    outside any transaction, cached), written at once. Computing again replaces the values.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    ACTIVE = (Status.QUEUED, Status.RUNNING)
    ENDED = (Status.DONE, Status.FAILED)
    SUCCEEDED = (Status.DONE,)

    run = models.OneToOneField(BreakerRun, on_delete=models.CASCADE, related_name="statistics")
    embedder = models.ForeignKey(
        "engines.Engine", on_delete=models.PROTECT, related_name="+", null=True, blank=True
    )
    analyst = models.ForeignKey(
        "engines.Engine", on_delete=models.PROTECT, related_name="+", null=True, blank=True
    )
    difficulty_engine = models.ForeignKey(
        "engines.Engine", on_delete=models.PROTECT, related_name="+", null=True, blank=True
    )
    max_parse_attempts = models.PositiveSmallIntegerField(default=3)
    chrf_max_pairs = models.PositiveIntegerField(default=5000)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    # The Table 2 numbers: {"texts", "diversity_embd", "diversity_chrf", ..., "qe": {...}}.
    values = models.JSONField(default=dict, blank=True)
    # Per selected text: {"chain", "analysis": {...}} or {"chain", "error"}.
    texts = models.JSONField(default=list, blank=True)
    chrf_signature = models.CharField(max_length=200, blank=True)
    # ``round_index`` is bumped on every (re)start, so a message of an earlier computation is
    # stale. Who asked for the statistics (there is no creator apart from the run's).
    created_by = None
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        verbose_name_plural = "breaker statistics"

    def __str__(self) -> str:
        return f"statistics of breaker run {self.run_id}"

    @property
    def scope(self) -> str:
        """The engine-ledger scope of the statistics' calls (booked apart from the run's)."""
        return f"breaker_statistics:{self.pk}"
