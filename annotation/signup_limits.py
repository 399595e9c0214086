"""A throttle on public sign-up: attempts per client address and campaign, per hour.

Sign-up creates accounts without any credential, so one client could fill a campaign (and a
Prolific study's budget) with made-up annotators. The count lives in Django's default cache,
which every web process shares (Redis, or the database cache: config/settings.py): a fixed
one-hour window, which is all a throttle against bursts needs.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache

_WINDOW_S = 3600


def record_signup_attempt(address: str, campaign_id: int, *, now: float | None = None) -> bool:
    """Count one sign-up attempt; ``False`` when this address used up this campaign's hour."""
    window = int((now if now is not None else time.time()) // _WINDOW_S)
    key = f"hardset:signup:{campaign_id}:{address}:{window}"
    cache.add(key, 0, timeout=_WINDOW_S)
    try:
        count = cache.incr(key)
    except ValueError:  # evicted between add and incr
        cache.set(key, 1, timeout=_WINDOW_S)
        count = 1
    return count <= settings.SIGNUP_ATTEMPTS_PER_HOUR
