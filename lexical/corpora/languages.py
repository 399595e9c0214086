"""Language codes of corpora: BCP-47-like (``en``, ``pt-BR``, ``zh-Hans``), as the transfers
of search/breaker accept them, and known to ``langcodes`` (as annotation's Appraise import
checks), stored in their standard form (``EN`` → ``en``, ``pt-br`` → ``pt-BR``)."""

from __future__ import annotations

import re

import langcodes

_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
MAX_CODE = 16  # the models' field length


def clean_language_code(value: object) -> str:
    """The standard form of ``value``; ValueError with a readable reason otherwise."""
    code = str(value or "").strip()
    if not code:
        raise ValueError("a language code is required (e.g. en, es, pt-BR)")
    if len(code) > MAX_CODE or not _LANGUAGE.match(code):
        raise ValueError(f"not a language code: {code[:20]!r} (e.g. en, es, pt-BR)")
    try:
        standard = str(langcodes.standardize_tag(code))
    except ValueError:
        raise ValueError(f"not a language code: {code!r}") from None
    if not langcodes.get(standard).is_valid() or len(standard) > MAX_CODE:
        raise ValueError(f"unknown language code {code!r}")
    return standard
