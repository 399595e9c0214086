"""What every lexical study row shares: who built it and when, newest first. Abstract: the
studies' own tables keep these columns (no migration)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class StudyRecord(models.Model):
    """Abstract: the row linking a study's annotation campaign to what it was built from."""

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]
