"""Who may see and edit the lexical app: staff, like the other admin areas (search runs,
difficulty datasets). One place, so pages, API and exports agree."""

from __future__ import annotations

from core.access import is_active_staff

may_use_lexical = is_active_staff
