"""Rule-validation studies (seed 004 §2.2–2.3, App. A Fig. 3): native speakers judge, per
concept, whether a variation is missing, which listed variations do not mean the concept, and
whether each generated rule is correct. The answers live in an annotation campaign; this row
keeps what the study was built from, so results map back to concepts and rules."""

from __future__ import annotations

from django.db import models

from lexical.models.concepts import MiningJob
from lexical.models.rules import RuleJob
from lexical.models.study import StudyRecord


class RuleValidationStudy(StudyRecord):
    # Annotation knows no other app; the link goes from the producer to the campaign.
    campaign = models.OneToOneField(
        "annotation.Campaign", on_delete=models.CASCADE, related_name="rule_validation_study"
    )
    mining_job = models.ForeignKey(
        MiningJob,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="rule_validation_studies",
    )
    src_lang = models.CharField(max_length=16)
    tgt_lang = models.CharField(max_length=16)
    rule_jobs = models.ManyToManyField(RuleJob, related_name="validation_studies")
    # seed, max_concepts, overlap, attention_checks and what was left out (and why).
    params = models.JSONField(default=dict)

    def __str__(self) -> str:
        return f"Rule validation #{self.pk} ({self.src_lang}→{self.tgt_lang})"
