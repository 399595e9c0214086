"""Which environment variables may hold an engine's API key, and keeping keys out of errors.

An engine names the variable holding its key (``Engine.api_key_env``) and the call path sends
that variable's value as a Bearer token to the engine's base URL, which a staff user chooses.
Any variable would therefore leak to any URL; so only variables an operator allows in
``settings.ENGINE_KEY_VARIABLES`` (names, or prefixes ending in ``*``) may be named, and the
server's own secrets never, even when listed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from django.conf import settings

__all__ = ["key_variable_problem", "mask_secrets", "read_api_key"]

# The platform's own secrets (config/settings.py). Their ``_FILE`` twins are refused with every
# other ``*_FILE`` name below: a file path is never a key, and it points at a secret.
SERVER_SECRETS = frozenset(
    {
        "SECRET_KEY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "EMAIL_HOST_PASSWORD",
        "EMAIL_HOST_USER",
        "HARDSET_ADMIN_PASSWORD",
    }
)
_MASK = "***"
# Keys shorter than this are not masked: replacing every "1" in a message helps nobody, and no
# real API key is that short.
_MIN_MASKED_LENGTH = 8
_BEARER = re.compile(r"(Bearer)\s+[^\s\"',;]+", re.IGNORECASE)


def _allowed_patterns() -> list[str]:
    return list(getattr(settings, "ENGINE_KEY_VARIABLES", []))


def _matches(name: str, pattern: str) -> bool:
    if pattern.endswith("*"):
        return name.startswith(pattern[:-1])
    return name == pattern


def key_variable_problem(name: str) -> str | None:
    """Why ``name`` may not hold an engine key, or ``None`` when it may."""
    if not name:
        return None
    if name in SERVER_SECRETS or name.endswith("_FILE"):
        return f"{name} is one of the server's own secrets and is not allowed as an engine key."
    if not any(_matches(name, pattern) for pattern in _allowed_patterns()):
        allowed = ", ".join(_allowed_patterns()) or "none"
        return (
            f"{name} is not allowed as an engine key variable; the operator allows "
            f"{allowed} (setting ENGINE_KEY_VARIABLES)."
        )
    return None


def read_api_key(name: str) -> str | None:
    """The key held by an allowed variable; raises ``PermissionError`` for a refused name.

    Checked again here, at call time, because a row may predate the rule or have been written
    around the model's validation.
    """
    problem = key_variable_problem(name)
    if problem:
        raise PermissionError(problem)
    return os.environ.get(name) or None


def _known_keys() -> list[str]:
    """Values of every allowed key variable set in this process."""
    values = []
    for name, value in os.environ.items():
        if len(value) >= _MIN_MASKED_LENGTH and key_variable_problem(name) is None:
            values.append(value)
    return values


def mask_secrets(text: str, keys: Iterable[str | None] = ()) -> str:
    """``text`` with every engine key (those given and those in allowed variables) and every
    ``Bearer`` token replaced by ``***``; for error text that is stored, returned or logged."""
    if not text:
        return text
    secrets = {key for key in (*keys, *_known_keys()) if key and len(key) >= _MIN_MASKED_LENGTH}
    # Longest first, so a key that contains another is masked whole.
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, _MASK)
    return _BEARER.sub(rf"\1 {_MASK}", text)
