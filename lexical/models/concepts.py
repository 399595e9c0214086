"""Concepts with variations (seed 004 §2.1, App. B.1) and the examples chosen for studies
(App. A.2).

A concept is a source word (lemma, POS) that a target language expresses with several lexical
variations; each variation is a target lemma with the surface forms seen in the corpus. Concepts
come from a mining job over a parallel corpus, or from an imported dataset (DTAiLS).
"""

from __future__ import annotations

from django.db import models

from lexical.models.corpora import ParallelCorpus, SentencePair
from rounds.models import CountedJob


class MiningJob(CountedJob):
    """Mine one corpus for concepts with variations; ``params`` holds the thresholds (the paper's
    defaults in ``lexical.mining``), ``stats`` what each filter kept."""

    corpus = models.ForeignKey(ParallelCorpus, on_delete=models.CASCADE, related_name="mining_jobs")
    params = models.JSONField(default=dict)
    stats = models.JSONField(default=dict, blank=True)
    # False when no POS tagger was available: concepts are then keyed by lemma alone.
    pos_used = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"Mining #{self.pk} of {self.corpus}"

    @property
    def scope(self) -> str:
        return f"lexical_mining:{self.pk}"


class Concept(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        REJECTED = "rejected", "Rejected"

    class Origin(models.TextChoices):
        MINED = "mined", "Mined"
        IMPORTED = "imported", "Imported"

    mining_job = models.ForeignKey(
        MiningJob, null=True, blank=True, on_delete=models.CASCADE, related_name="concepts"
    )
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.MINED)
    src_lang = models.CharField(max_length=16)
    tgt_lang = models.CharField(max_length=16)
    lemma = models.CharField(max_length=200)
    pos = models.CharField(max_length=16, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    # Entropy (nats) of the variation distribution and the aligned occurrences behind it.
    entropy = models.FloatField(null=True, blank=True)
    total_count = models.PositiveIntegerField(default=0)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["tgt_lang", "lemma", "pos", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["mining_job", "lemma", "pos"], name="lexical_concept_per_job"
            )
        ]

    def __str__(self) -> str:
        return f"{self.lemma} ({self.pos})" if self.pos else self.lemma


class Variation(models.Model):
    concept = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="variations")
    lemma = models.CharField(max_length=200)
    # Surface forms seen aligned to the concept, most frequent first.
    surface_forms = models.JSONField(default=list)
    count = models.PositiveIntegerField(default=0)
    dropped = models.BooleanField(default=False)

    class Meta:
        ordering = ["concept", "-count", "lemma", "id"]
        constraints = [
            models.UniqueConstraint(fields=["concept", "lemma"], name="lexical_variation_lemma")
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        """The variation as DTAiLS writes it: its surface forms joined with ``/``."""
        return "/".join(self.surface_forms) if self.surface_forms else self.lemma


class ConceptExample(models.Model):
    """A sentence pair where the concept's source word is aligned to one of its variations;
    offsets are Python string indices of the two words."""

    concept = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="examples")
    variation = models.ForeignKey(Variation, on_delete=models.CASCADE, related_name="examples")
    pair = models.ForeignKey(
        SentencePair, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # Imported examples carry their text; mined ones read it from ``pair``.
    src = models.TextField(blank=True)
    tgt = models.TextField(blank=True)
    src_start = models.PositiveIntegerField(null=True, blank=True)
    src_end = models.PositiveIntegerField(null=True, blank=True)
    tgt_start = models.PositiveIntegerField(null=True, blank=True)
    tgt_end = models.PositiveIntegerField(null=True, blank=True)
    src_tokens = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["concept", "variation", "-src_tokens", "id"]

    def __str__(self) -> str:
        return f"{self.concept} → {self.variation}: {self.source_text[:60]}"

    @property
    def source_text(self) -> str:
        return self.pair.src if self.pair is not None else self.src

    @property
    def target_text(self) -> str:
        return self.pair.tgt if self.pair is not None else self.tgt


class ExampleSelection(models.Model):
    """Examples chosen for a study of one language pair (App. A.2), reproducible from ``seed``."""

    name = models.CharField(max_length=200)
    src_lang = models.CharField(max_length=16)
    tgt_lang = models.CharField(max_length=16)
    seed = models.BigIntegerField()
    # max_concepts, pairs_per_concept, uniformity_tolerance, and which filter applied.
    params = models.JSONField(default=dict)
    concepts = models.ManyToManyField(Concept, related_name="selections")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.src_lang}→{self.tgt_lang})"


class SelectedExample(models.Model):
    selection = models.ForeignKey(
        ExampleSelection, on_delete=models.CASCADE, related_name="selected"
    )
    example = models.ForeignKey(ConceptExample, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["selection", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["selection", "position"], name="lexical_selected_position"
            )
        ]

    def __str__(self) -> str:
        return f"{self.selection_id}#{self.position}"
