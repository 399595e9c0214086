"""Throttles on public sign-up, per client address, per hour.

Sign-up creates accounts without any credential, so one client could fill a campaign (and a
Prolific study's budget) with made-up annotators: attempts count per address and campaign. The
form also says when a name is taken, which tells whoever asks that an account of that name
exists: those answers count per address across every campaign, so a list of names cannot be
checked one campaign after another. The counts live in Django's default cache, which every
web process shares (Redis, or the database cache: config/settings.py): a fixed one-hour
window, which is all a throttle against bursts needs.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache

_WINDOW_S = 3600


def _window(now: float | None) -> int:
    return int((now if now is not None else time.time()) // _WINDOW_S)


def _count(key: str) -> int:
    cache.add(key, 0, timeout=_WINDOW_S)
    try:
        return cache.incr(key)
    except ValueError:  # evicted between add and incr
        cache.set(key, 1, timeout=_WINDOW_S)
        return 1


def record_signup_attempt(address: str, campaign_id: int, *, now: float | None = None) -> bool:
    """Count one sign-up attempt; ``False`` when this address used up this campaign's hour."""
    count = _count(f"hardset:signup:{campaign_id}:{address}:{_window(now)}")
    return count <= settings.SIGNUP_ATTEMPTS_PER_HOUR


def _taken_key(address: str, now: float | None) -> str:
    return f"hardset:signup-taken:{address}:{_window(now)}"


def record_taken_name(address: str, *, now: float | None = None) -> bool:
    """Count one "that name is taken" answer; ``False`` when this address had its hour's."""
    return _count(_taken_key(address, now)) <= settings.SIGNUP_ATTEMPTS_PER_HOUR


def taken_names_used_up(address: str, *, now: float | None = None) -> bool:
    """Whether this address was told its hour's number of taken names: any further sign-up
    is refused, so a refusal says nothing about the name it tried."""
    told = cache.get(_taken_key(address, now)) or 0
    return told >= settings.SIGNUP_ATTEMPTS_PER_HOUR
