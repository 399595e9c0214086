"""Strict parsing of environment variables for settings.

A typo in a deployment variable must stop the process at start-up with a message that names the
variable, not surface later as odd behaviour. Every reader accepts a ``NAME_FILE`` twin so secrets
can come from mounted files (Docker/Kubernetes secrets) instead of the environment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def read_raw(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The value of ``name``, or the contents of the file named by ``name_FILE``."""
    environ = os.environ if environ is None else environ
    file_path = environ.get(f"{name}_FILE")
    if file_path and name in environ:
        raise ImproperlyConfigured(f"Set either {name} or {name}_FILE, not both.")
    if file_path:
        try:
            with open(file_path, encoding="utf-8") as handle:
                return handle.read().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={file_path!r} cannot be read: {exc}") from exc
    return environ.get(name)


def env_str(name: str, default: str, environ: Mapping[str, str] | None = None) -> str:
    value = read_raw(name, environ)
    return default if value is None or value == "" else value


def env_bool(name: str, default: bool, environ: Mapping[str, str] | None = None) -> bool:
    value = read_raw(name, environ)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={value!r} is not a boolean; use one of {sorted(_TRUE | _FALSE)}."
    )


def env_int(
    name: str,
    default: int,
    environ: Mapping[str, str] | None = None,
    *,
    minimum: int | None = None,
) -> int:
    value = read_raw(name, environ)
    if value is None or value == "":
        return default
    try:
        number = int(value.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer.") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} must be at least {minimum}.")
    return number


def env_list(name: str, default: list[str], environ: Mapping[str, str] | None = None) -> list[str]:
    value = read_raw(name, environ)
    if value is None or value.strip() == "":
        return list(default)
    return [part.strip() for part in value.split(",") if part.strip()]


_HEADER_NAME = re.compile(r"[A-Za-z0-9]+(-[A-Za-z0-9]+)*")


def env_proxy_ssl_header(
    name: str, environ: Mapping[str, str] | None = None
) -> tuple[str, str] | None:
    """Django's ``SECURE_PROXY_SSL_HEADER`` from a header name such as ``X-Forwarded-Proto``.

    The proxy is taken to send the value ``https``; ``None`` (unset) trusts no header.
    """
    value = read_raw(name, environ)
    if value is None or value.strip() == "":
        return None
    header = value.strip()
    if not _HEADER_NAME.fullmatch(header):
        raise ImproperlyConfigured(
            f"{name}={value!r} is not an HTTP header name; use e.g. X-Forwarded-Proto."
        )
    return "HTTP_" + header.upper().replace("-", "_"), "https"
