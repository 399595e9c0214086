"""Who may see and edit the lexical app: staff, like the other admin areas (search runs,
difficulty datasets). One place, so pages, API and exports agree."""

from __future__ import annotations


def may_use_lexical(user) -> bool:
    return bool(user and user.is_authenticated and user.is_active and user.is_staff)
