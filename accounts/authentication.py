"""DRF authentication: personal API tokens, and Basic auth only where it is switched on."""

from __future__ import annotations

from django.conf import settings
from rest_framework import authentication, exceptions
from rest_framework.permissions import SAFE_METHODS

from accounts import services
from accounts.models import ApiToken
from accounts.throttles import FailedTokenThrottle


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer hs_...``. A read-only token may only use safe methods; failures
    are throttled per client address (``FailedTokenThrottle``, a 429 once used up)."""

    keyword = "Bearer"

    def authenticate(self, request):
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        throttle = FailedTokenThrottle()
        if throttle.blocked(request):
            raise exceptions.Throttled(throttle.wait())
        try:
            token = self._token(parts)
        except exceptions.AuthenticationFailed:
            throttle.record_failure()
            raise
        if token.read_only and request.method not in SAFE_METHODS:
            raise exceptions.PermissionDenied("This token is read-only.")
        return token.user, token

    def _token(self, parts: list[bytes]) -> ApiToken:
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Give the token as 'Bearer <token>'.")
        try:
            secret = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        token = services.authenticate_token(secret)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid, expired or revoked token.")
        return token

    def authenticate_header(self, request) -> str:
        return f'{self.keyword} realm="api"'


class OptionalBasicAuthentication(authentication.BasicAuthentication):
    """Basic auth, only when ``settings.API_BASIC_AUTH`` is on (default: only in DEBUG).

    Checked per request rather than at start-up so that tests can switch it. Failed attempts
    count toward the django-axes lockout like the login form's: both go through authenticate().
    """

    def authenticate(self, request):
        if not settings.API_BASIC_AUTH:
            return None
        return super().authenticate(request)
