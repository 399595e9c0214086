"""django-csp's middleware, with the settings' own policy built once per process.

django-csp builds the ``Content-Security-Policy`` header from the settings again for every
response, about 0.1 ms of each annotating request's few (bench/README.md, "Annotation load").
No page here asks for a nonce, and no view has a policy of its own, so nearly every response
carries the settings' policy as it is: that header is built once (again when a test changes
the settings). A response with a nonce or a view's own policy (django-csp's decorators) goes
through django-csp unchanged.
"""

from __future__ import annotations

from functools import cache

from csp import middleware
from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.http import HttpRequest
from django.http.response import HttpResponseBase

# What django-csp's decorators set on a response that has a policy of its own.
_OWN_POLICY = tuple(
    f"_csp_{kind}{suffix}" for kind in ("config", "update", "replace") for suffix in ("", "_ro")
)
_DEBUG_PAGES = (404, 500)  # django-csp leaves Django's debug pages alone


@cache
def _headers() -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
    """(header, policy, the response attribute that exempts from it, excluded path prefixes)
    for the enforced and the report-only policy, as django-csp builds them from the settings;
    an empty policy sends no header."""
    found = []
    for header, exempt, setting, report_only in (
        (HEADER, "_csp_exempt", "CONTENT_SECURITY_POLICY", False),
        (HEADER_REPORT_ONLY, "_csp_exempt_ro", "CONTENT_SECURITY_POLICY_REPORT_ONLY", True),
    ):
        policy = build_policy(report_only=report_only)
        prefixes = tuple((getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES") or ())
        if policy:
            found.append((header, policy, exempt, prefixes))
    return tuple(found)


def _forget_headers(**_) -> None:
    _headers.cache_clear()


setting_changed.connect(_forget_headers)


class CSPMiddleware(middleware.CSPMiddleware):
    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        nonce_used = getattr(request, "_csp_nonce", None) is not None
        if nonce_used or any(hasattr(response, name) for name in _OWN_POLICY):
            return super().process_response(request, response)
        if settings.DEBUG and response.status_code in _DEBUG_PAGES:
            return response
        for header, policy, exempt, prefixes in _headers():
            if (
                header not in response
                and not getattr(response, exempt, False)
                and not request.path_info.startswith(prefixes)
            ):
                response[header] = policy
        # As django-csp does: a nonce asked for after the header is written is an error.
        request.csp_nonce = middleware.CheckableLazyObject(self._csp_nonce_post_response)  # type: ignore[attr-defined]
        return response
