"""Challenge sets: curated hard texts with provenance, human validation and frozen versions.

Nothing in the other apps points here: annotation items carry ``origin="challenge_sets"`` and
an ``origin_ref`` naming the set and item (``cs:<set>:item:<item>:<system>``), and the set keeps
a foreign key to its validation campaign, never the reverse.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.text import slugify

from challenge_sets.policy import PolicyError, ValidationPolicy

ORIGIN = "challenge_sets"


def _validate_policy(value: Any) -> None:
    try:
        ValidationPolicy.from_dict(value)
    except PolicyError as exc:
        raise ValidationError(f"validation policy: {exc}") from exc


def _validate_language_pairs(value: Any) -> None:
    if not isinstance(value, list) or not all(
        isinstance(v, str) and len(v.split("-")) == 2 and all(v.split("-")) for v in value
    ):
        raise ValidationError('language pairs must be a list like ["en-cs", "en-de"]')


class ChallengeSet(models.Model):
    name = models.CharField(max_length=200, unique=True)
    slug = models.SlugField(max_length=80, unique=True, editable=False)
    description = models.TextField(blank=True)
    language_pairs = models.JSONField(
        default=list, blank=True, validators=[_validate_language_pairs]
    )
    licence = models.CharField(max_length=200, default="CC-BY-4.0")
    provenance_notes = models.TextField(blank=True)
    # ValidationPolicy.to_dict(); checked on the way in (policy.py).
    policy = models.JSONField(default=dict, validators=[_validate_policy])
    campaign = models.ForeignKey(
        "annotation.Campaign", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        permissions = [("curate_challengeset", "Can curate, validate, freeze and export sets")]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs):
        if not self.slug:
            self.slug = f"{slugify(self.name)[:60] or 'set'}-{secrets.token_hex(3)}"
        super().save(*args, **kwargs)

    def get_policy(self) -> ValidationPolicy:
        return ValidationPolicy.from_dict(self.policy)


class ChallengeItem(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected"
        NEEDS_REVIEW = "needs_review", "Needs review"

    class Validation(models.TextChoices):
        NOT_SENT = "", "Not sent"
        SENT = "sent", "Sent"
        VALIDATED = "validated", "Validated"

    class Proposal(models.TextChoices):
        NONE = "", "—"
        ACCEPT = "accept", "Accept"
        REJECT = "reject", "Reject"
        REVIEW = "review", "Review"

    challenge_set = models.ForeignKey(ChallengeSet, on_delete=models.CASCADE, related_name="items")
    origin = models.CharField(max_length=40)
    origin_ref = models.CharField(max_length=255, blank=True)
    src_lang = models.CharField(max_length=16)
    tgt_lang = models.CharField(max_length=16, blank=True)
    source = models.TextField()
    # {system: translation} judged by ESA/MQM; a choice item has choices and an attested label.
    translations = models.JSONField(default=dict, blank=True)
    question = models.TextField(blank=True)
    choices = models.JSONField(default=list, blank=True)
    attested = models.CharField(max_length=200, blank=True)
    # Frozen when the item is added: where it came from and how it was scored.
    provenance = models.JSONField(default=dict, blank=True)
    automatic_difficulty = models.FloatField(null=True, blank=True)
    # The human result, copied from annotation.selectors.item_results (QC-passed annotators).
    human = models.JSONField(default=dict, blank=True)
    human_difficulty = models.FloatField(null=True, blank=True)
    agreement = models.FloatField(null=True, blank=True)
    n_judgments = models.PositiveIntegerField(default=0)
    validation = models.CharField(
        max_length=16, choices=Validation.choices, default=Validation.NOT_SENT, blank=True
    )
    proposal = models.CharField(
        max_length=8, choices=Proposal.choices, default=Proposal.NONE, blank=True
    )
    proposal_reason = models.CharField(max_length=300, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    status_reason = models.CharField(max_length=500, blank=True)
    duplicate_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    similarity = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["challenge_set_id", "id"]
        constraints = [
            # Adding the same pull / segment / line twice is a no-op (add_items skips it).
            models.UniqueConstraint(
                fields=["challenge_set", "origin", "origin_ref"],
                condition=~Q(origin_ref=""),
                name="challenge_item_unique_origin_ref",
            ),
        ]
        indexes = [
            # The curation table filters a set's items by status and origin.
            models.Index(fields=["challenge_set", "status"], name="challenge_item_status_idx"),
            models.Index(fields=["challenge_set", "origin"], name="challenge_item_origin_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.challenge_set_id}:{self.pk} {self.source[:40]}"

    @property
    def language_pair(self) -> str:
        return f"{self.src_lang}-{self.tgt_lang}" if self.tgt_lang else self.src_lang

    @property
    def is_validated(self) -> bool:
        return self.validation == self.Validation.VALIDATED


class AuditEntry(models.Model):
    """Who did what to a set and when: decisions on items, sends, freezes. Never edited."""

    challenge_set = models.ForeignKey(ChallengeSet, on_delete=models.CASCADE, related_name="audit")
    item = models.ForeignKey(
        ChallengeItem, null=True, blank=True, on_delete=models.CASCADE, related_name="audit"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=40)
    from_status = models.CharField(max_length=16, blank=True)
    to_status = models.CharField(max_length=16, blank=True)
    reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.action} {self.from_status}→{self.to_status}"


class FrozenVersion(models.Model):
    """An immutable numbered version: the accepted, validated items as canonical text.

    Every export of a version is a function of the stored text alone, so exporting it again
    gives the same bytes whatever happened to the live set since.
    """

    challenge_set = models.ForeignKey(
        ChallengeSet, on_delete=models.CASCADE, related_name="versions"
    )
    number = models.PositiveIntegerField()
    items_jsonl = models.TextField()
    annotations = models.TextField(blank=True)
    annotations_format = models.CharField(max_length=16, blank=True)
    manifest = models.TextField()
    checksum = models.CharField(max_length=64)
    n_items = models.PositiveIntegerField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["challenge_set_id", "-number"]
        constraints = [
            # Version numbers are v1, v2, ... per set; freeze takes max + 1 under a row lock.
            models.UniqueConstraint(
                fields=["challenge_set", "number"], name="challenge_version_unique_number"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.challenge_set} v{self.number}"
