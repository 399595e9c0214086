"""Personal API tokens: a credential for scripts that is not the account password."""

from __future__ import annotations

from django.conf import settings
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models
from django.utils import timezone


class ApiToken(models.Model):
    """One personal token. Only a SHA-256 digest of the secret is kept; the secret is shown
    once, when the token is made. ``prefix`` (the secret's first characters) lets its owner
    tell tokens apart; it is too short to guess the rest from."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16)
    digest = models.CharField(max_length=64, unique=True)
    read_only = models.BooleanField(default=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The token page: one user's tokens, newest first.
            models.Index(fields=["user", "-created_at"], name="accounts_token_mine_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def is_active(self, now=None) -> bool:
        now = now or timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)


class Session(AbstractBaseSession):
    """A database session that names its signed-in user in a column (``django_session`` keeps
    it only inside the encoded data), so that every signed-in request reads its session and its
    user with one statement (accounts/sessions.py). Deleting a user deletes their sessions."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.CASCADE, related_name="+"
    )

    class Meta:
        db_table = "accounts_session"
        verbose_name = "session"
        verbose_name_plural = "sessions"

    @classmethod
    def get_session_store_class(cls):
        from accounts.sessions import SessionStore

        return SessionStore
