"""The Content-Security-Policy header (core/csp.py): the settings' policy, built once, on
every response; anything django-csp does per response (nonces, a view's own policy) as
django-csp does it."""

from __future__ import annotations

import pytest
from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.exceptions import CSPNonceError
from csp.middleware import CSPMiddleware as DjangoCSPMiddleware
from django.http import HttpResponse
from django.test import RequestFactory, override_settings

from core.csp import CSPMiddleware

pytestmark = pytest.mark.django_db


def _through(middleware_class, response: HttpResponse, *, use_nonce: bool = False, path="/"):
    request = RequestFactory().get(path)

    def view(request):
        if use_nonce:
            str(request.csp_nonce)
        return response

    middleware = middleware_class(view)
    return request, middleware(request)


def _headers(response) -> dict[str, str]:
    return {name: response[name] for name in (HEADER, HEADER_REPORT_ONLY) if name in response}


@pytest.mark.parametrize(
    "make",
    [
        HttpResponse,
        lambda: _decorated("_csp_update", {"img-src": ["https://example.org"]}),
        lambda: _decorated("_csp_replace", {"img-src": ["https://example.org"]}),
        lambda: _decorated("_csp_exempt", True),
    ],
    ids=["plain", "csp_update", "csp_replace", "csp_exempt"],
)
@pytest.mark.parametrize("use_nonce", [False, True], ids=["no nonce", "nonce"])
def test_the_header_is_django_csps(make, use_nonce):
    _, ours = _through(CSPMiddleware, make(), use_nonce=use_nonce)
    _, theirs = _through(DjangoCSPMiddleware, make(), use_nonce=use_nonce)
    assert _headers(ours) == _headers(theirs)
    assert (HEADER in ours) != hasattr(ours, "_csp_exempt")


def _decorated(attribute: str, value) -> HttpResponse:
    response = HttpResponse()
    setattr(response, attribute, value)
    return response


def test_a_policy_changed_in_the_settings_is_the_one_sent():
    _, before = _through(CSPMiddleware, HttpResponse())
    policy = {"DIRECTIVES": {"default-src": ["'none'"]}}
    report_only = {"DIRECTIVES": {"img-src": ["'self'"]}, "EXCLUDE_URL_PREFIXES": ["/skip/"]}
    with override_settings(
        CONTENT_SECURITY_POLICY=policy, CONTENT_SECURITY_POLICY_REPORT_ONLY=report_only
    ):
        for path in ("/", "/skip/this"):
            _, ours = _through(CSPMiddleware, HttpResponse(), path=path)
            _, theirs = _through(DjangoCSPMiddleware, HttpResponse(), path=path)
            assert _headers(ours) == _headers(theirs)
        assert ours[HEADER] == "default-src 'none'" and HEADER_REPORT_ONLY not in ours
    _, after = _through(CSPMiddleware, HttpResponse())
    assert _headers(after) == _headers(before)


def test_a_nonce_asked_for_after_the_header_is_an_error():
    request, _ = _through(CSPMiddleware, HttpResponse())
    with pytest.raises(CSPNonceError):
        str(request.csp_nonce)


def test_pages_carry_the_header(client):
    assert "frame-ancestors 'none'" in client.get("/accounts/login/")[HEADER]
