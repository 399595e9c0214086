"""API throttles whose rates come from settings at request time (API_THROTTLE_ANON/_USER).

DRF's own classes read their rates once, at import; reading them per request lets an operator's
setting and a test's override take effect."""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class AnonApiThrottle(AnonRateThrottle):
    def get_rate(self) -> str:
        return settings.API_THROTTLE_ANON


class UserApiThrottle(UserRateThrottle):
    def get_rate(self) -> str:
        return settings.API_THROTTLE_USER
