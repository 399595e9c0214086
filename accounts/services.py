"""Write use-cases of personal API tokens: create, revoke, authenticate."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.utils import timezone

from accounts.models import ApiToken

__all__ = ["TOKEN_PREFIX", "authenticate_token", "create_token", "revoke_token"]

TOKEN_PREFIX = "hs_"
_SHOWN_CHARS = 8
# Writing last_used_at on every request would make each API call a write; once a minute is
# enough to tell a token in use from a forgotten one.
_LAST_USED_RESOLUTION = timedelta(minutes=1)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create_token(
    user, name: str, *, read_only: bool = False, expires_at: datetime | None = None
) -> tuple[ApiToken, str]:
    """A new token for ``user`` and its secret, which is not stored and cannot be shown again.

    The secret has 256 random bits, so a plain SHA-256 (no salt, no slow hash) cannot be
    reversed; a fast hash lets every API request find its token with one indexed lookup.
    """
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name.strip() or "token",
        prefix=secret[: len(TOKEN_PREFIX) + _SHOWN_CHARS],
        digest=_digest(secret),
        read_only=read_only,
        expires_at=expires_at,
    )
    return token, secret


def revoke_token(token: ApiToken, *, now=None) -> ApiToken:
    """Stop a token from working (kept, marked revoked, so its owner sees what it was)."""
    if token.revoked_at is None:
        token.revoked_at = now or timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def authenticate_token(secret: str, *, now=None) -> ApiToken | None:
    """The active token whose secret this is (its user active too), or ``None``."""
    if not secret.startswith(TOKEN_PREFIX):
        return None
    now = now or timezone.now()
    token = ApiToken.objects.select_related("user").filter(digest=_digest(secret)).first()
    if token is None or not token.is_active(now) or not token.user.is_active:
        return None
    if token.last_used_at is None or now - token.last_used_at > _LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token
