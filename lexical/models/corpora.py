"""Parallel corpora (seed 004 §2.1): aligned sentence pairs in one language pair."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ParallelCorpus(models.Model):
    class Status(models.TextChoices):
        IMPORTING = "importing", "Importing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    name = models.CharField(max_length=200, unique=True)
    src_lang = models.CharField(max_length=16)
    tgt_lang = models.CharField(max_length=16)
    # How the pairs arrived: "moses" (two aligned plain-text files), "tsv" or "jsonl".
    source_format = models.CharField(max_length=16, blank=True)
    description = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.READY)
    error = models.TextField(blank=True)
    size = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "parallel corpora"

    def __str__(self) -> str:
        return f"{self.name} ({self.src_lang}→{self.tgt_lang})"


class SentencePair(models.Model):
    """One aligned pair; ``position`` is its 1-based line in the imported file."""

    corpus = models.ForeignKey(ParallelCorpus, on_delete=models.CASCADE, related_name="pairs")
    position = models.PositiveIntegerField()
    src = models.TextField()
    tgt = models.TextField()

    class Meta:
        ordering = ["corpus", "position"]
        constraints = [
            models.UniqueConstraint(fields=["corpus", "position"], name="lexical_pair_position")
        ]

    def __str__(self) -> str:
        return f"{self.corpus_id}:{self.position}"
