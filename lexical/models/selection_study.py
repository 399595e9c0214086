"""The lexical-selection study of an example selection (seed 004 §2.3, App. A Fig. 4): native
speakers choose the variation that fits each selected sentence; the majority decides.

The study *is* an ``annotation.Campaign`` with the choice protocol; this row only links it to the
selection it was built from and records how it was built. Everything derived (majorities, Table 2)
is computed from the campaign's judgments when read, never stored (see
``lexical.studies.selection_study``)."""

from __future__ import annotations

from django.db import models

from annotation.models import Campaign
from lexical.models.concepts import ExampleSelection
from lexical.models.study import StudyRecord


class SelectionStudy(StudyRecord):
    campaign = models.OneToOneField(
        Campaign, on_delete=models.CASCADE, related_name="selection_study"
    )
    selection = models.ForeignKey(
        ExampleSelection, on_delete=models.CASCADE, related_name="studies"
    )
    # What the creator chose and what creation left out: attention_checks, skipped_concepts
    # ([{"id", "lemma", "variations"}]), items.
    params = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return f"Selection study {self.campaign.name}"
