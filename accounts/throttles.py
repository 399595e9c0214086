"""API throttles whose rates come from settings at request time (API_THROTTLE_ANON/_USER,
API_THROTTLE_FAILED_TOKEN).

DRF's own classes read their rates once, at import; reading them per request lets an operator's
setting and a test's override take effect."""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle


class AnonApiThrottle(AnonRateThrottle):
    def get_rate(self) -> str:
        return settings.API_THROTTLE_ANON


class UserApiThrottle(UserRateThrottle):
    def get_rate(self) -> str:
        return settings.API_THROTTLE_USER


class FailedTokenThrottle(SimpleRateThrottle):
    """Failed bearer-token authentications per client address.

    A wrong token is refused while DRF authenticates, before the view's throttles run, so they
    never counted it: anyone could try tokens as fast as the server answered. Used by
    ``ApiTokenAuthentication``: :meth:`blocked` before looking a token up (so a correct guess
    from a blocked address gets nothing either), :meth:`record_failure` after a refusal. The
    address is DRF's (``REMOTE_ADDR``, or ``X-Forwarded-For`` behind ``API_NUM_PROXIES``).
    """

    scope = "failed_token"
    # Set by SimpleRateThrottle.__init__ from the rate.
    duration: int
    num_requests: int

    def get_rate(self) -> str:
        return settings.API_THROTTLE_FAILED_TOKEN

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def blocked(self, request) -> bool:
        """Whether the address has used up its failures in the window (then see ``wait()``)."""
        self.key = self.get_cache_key(request, None)
        self.now = self.timer()
        self.history = [t for t in self.cache.get(self.key, []) if t > self.now - self.duration]
        return len(self.history) >= self.num_requests

    def record_failure(self) -> None:
        """Count one failure of the address :meth:`blocked` looked at."""
        self.history.insert(0, self.now)
        self.cache.set(self.key, self.history, self.duration)
