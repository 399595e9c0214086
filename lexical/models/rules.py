"""LLM-generated lexical rules (seed 004 §3, App. B.3): one job per generator engine writes, per
concept, a natural-language rule for each variation from example sentences where it occurs."""

from __future__ import annotations

from django.db import models

from lexical.models.concepts import Concept, ExampleSelection, MiningJob, Variation
from rounds.models import CountedJob

# The paper's settings (§3): the 50 longest source sentences under 50 tokens per variation.
DEFAULT_RULE_PARAMS = {
    "sentences_per_variation": 50,
    "max_sentence_tokens": 50,
    "max_reasks": 2,
    # Models without a system prompt (Gemma, App. B.3) get it prepended to the user message.
    "system_prompt_in_user": False,
}


class RuleJob(CountedJob):
    """Rules for a set of concepts from one generator engine. The concepts are frozen at
    creation (one :class:`RuleJobConcept` each), whichever source named them."""

    class Source(models.TextChoices):
        MINING_JOB = "mining_job", "Active concepts of a mining job"
        SELECTION = "selection", "Concepts of an example selection"
        CONCEPTS = "concepts", "An explicit list of concepts"

    source = models.CharField(max_length=16, choices=Source.choices)
    mining_job = models.ForeignKey(
        MiningJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="rule_jobs"
    )
    selection = models.ForeignKey(
        ExampleSelection, null=True, blank=True, on_delete=models.SET_NULL, related_name="rule_jobs"
    )
    # The generator's engine name (engines know no other app: no foreign key into them).
    engine = models.CharField(max_length=100)
    params = models.JSONField(default=dict)

    def __str__(self) -> str:
        return f"Rules #{self.pk} by {self.engine}"

    @property
    def scope(self) -> str:
        """The ledger label of every engine call the job makes (its cost is their sum)."""
        return f"lexical_rules:{self.pk}"

    @property
    def concepts_failed(self) -> int:
        return self.job_concepts.filter(status=RuleJobConcept.Status.FAILED).count()


class RuleJobConcept(models.Model):
    """The outcome of one concept in a rule job: its rules were written, or why not."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        OK = "ok", "Rules written"
        FAILED = "failed", "Failed"

    job = models.ForeignKey(RuleJob, on_delete=models.CASCADE, related_name="job_concepts")
    concept = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="rule_outcomes")
    position = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    # Engine calls made for the concept: the first question and each re-ask.
    attempts = models.PositiveSmallIntegerField(default=0)
    # The last answer, cut short, so a failure can be read on the job page.
    last_answer = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job", "position"]
        constraints = [
            # A round takes the next pending concepts in order: (job, status, position).
            models.UniqueConstraint(fields=["job", "concept"], name="lexical_rule_job_concept"),
            models.UniqueConstraint(fields=["job", "position"], name="lexical_rule_job_position"),
        ]
        indexes = [models.Index(fields=["job", "status", "position"])]

    def __str__(self) -> str:
        return f"{self.job_id}:{self.concept_id} {self.status}"


class Rule(models.Model):
    """One variation's rule from one generator; human validation (the next issue) sets
    ``validation_status``."""

    class Validation(models.TextChoices):
        UNVALIDATED = "unvalidated", "Not validated"
        CORRECT = "correct", "Correct"
        INCORRECT = "incorrect", "Incorrect"

    job = models.ForeignKey(RuleJob, on_delete=models.CASCADE, related_name="rules")
    concept = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="rules")
    variation = models.ForeignKey(Variation, on_delete=models.CASCADE, related_name="rules")
    text = models.TextField()
    generator = models.CharField(max_length=100)
    validation_status = models.CharField(
        max_length=16, choices=Validation.choices, default=Validation.UNVALIDATED
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["concept", "variation", "generator", "-created_at", "id"]
        constraints = [
            # A re-run round must never write a variation's rule twice.
            models.UniqueConstraint(fields=["job", "variation"], name="lexical_rule_per_job")
        ]
        # The concept page: every rule of a concept, newest per generator.
        indexes = [models.Index(fields=["concept", "generator"])]

    def __str__(self) -> str:
        return f"{self.generator}: {self.variation_id} — {self.text[:60]}"
