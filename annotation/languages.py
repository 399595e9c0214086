"""Language requirements of campaigns: who counts as a native (or working) speaker.

Codes are BCP-47 tags known to ``langcodes`` (``fa``, ``ja``, ``pt-BR``, ``zh-Hans``), compared
in their standard form, so case and aliases do not matter (``PT-br`` is ``pt-BR``, ``iw`` is
``he``). A bare requirement accepts every variety: ``pt`` is met by ``pt``, ``pt-BR`` and
``pt-PT``. A requirement with a subtag asks for that variety: ``pt-BR`` is met by ``pt-BR`` but
neither by ``pt-PT`` nor by a bare ``pt``, which does not say which one. Pure: no Django, so the
rules are tested without a database.

``lexical`` checks its corpora's codes with the same function (``annotation`` imports no other
app, DESIGN.md §1, so the check lives here).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import langcodes

_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
MAX_CODE = 16
"""The longest code kept, as the models' ``src_lang``/``tgt_lang``."""


def clean_language_code(value: object) -> str:
    """The standard form of ``value``; ValueError with a readable reason otherwise."""
    code = str(value or "").strip()
    if not code:
        raise ValueError("a language code is required (e.g. en, fa, pt-BR)")
    if len(code) > MAX_CODE or not _LANGUAGE.match(code):
        raise ValueError(f"not a language code: {code[:20]!r} (e.g. en, fa, pt-BR)")
    try:
        standard = str(langcodes.standardize_tag(code))
    except ValueError:
        raise ValueError(f"not a language code: {code!r}") from None
    if not langcodes.get(standard).is_valid() or len(standard) > MAX_CODE:
        raise ValueError(f"unknown language code {code!r}")
    return standard


def clean_language_codes(values: object) -> list[str]:
    """A list of codes in standard form, duplicates dropped, order kept; ValueError naming the
    first bad one."""
    if not isinstance(values, list | tuple):
        raise ValueError('must be a list of language codes, e.g. ["fa", "pt-BR"]')
    cleaned: list[str] = []
    for value in values:
        if not isinstance(value, str):
            raise ValueError(f"not a language code: {value!r}")
        code = clean_language_code(value)
        if code not in cleaned:
            cleaned.append(code)
    return cleaned


def split_codes(text: str) -> list[str]:
    """``"fa, ja; pt-BR"`` → ``["fa", "ja", "pt-BR"]`` (not yet checked)."""
    return [part.strip() for part in re.split(r"[,;]+", text or "") if part.strip()]


def _code_or_none(value: str) -> str | None:
    try:
        return clean_language_code(value)
    except ValueError:
        return None


def meets(required: str, declared: str) -> bool:
    """Whether a declared language satisfies one required code (both standardized here)."""
    want, have = _code_or_none(required), _code_or_none(declared)
    if want is None or have is None:
        return False
    return have.lower() == want.lower() or have.lower().startswith(want.lower() + "-")


def native_problem(required: list[str], native: str) -> str | None:
    """Why someone whose native language is ``native`` (one or more codes, comma-separated:
    bilingual natives exist) does not meet ``required`` (any one of them); ``None`` when they
    do, or when nothing is required."""
    natives = split_codes(native)
    if not required or any(meets(r, d) for r in required for d in natives):
        return None
    wanted = " or ".join(required)
    if not natives:
        return f"This campaign is for native speakers of {wanted}; give your native language."
    if not any(_code_or_none(d) for d in natives):
        return (
            f"This campaign is for native speakers of {wanted}. Give your native language as "
            f"a language code such as {required[0]} (you gave {native!r})."
        )
    return (
        f"This campaign is for native speakers of {wanted}; "
        f"you gave {', '.join(natives)} as your native language."
    )


def working_problem(required: list[str], native: str, working: Iterable[str]) -> str | None:
    """Why someone with these languages lacks one of the ``required`` working languages (all
    are needed, e.g. ``["en"]`` for an English source; a native language counts too); ``None``
    when nothing is missing."""
    spoken = split_codes(native) + [part for value in working for part in split_codes(value)]
    missing = [r for r in required if not any(meets(r, d) for d in spoken)]
    if not missing:
        return None
    return (
        f"This campaign needs annotators who also work in {' and '.join(required)}; "
        f"{', '.join(missing)} is not among your languages (give them as codes, e.g. "
        f"{missing[0]})."
    )


def language_name(code: str) -> str:
    """``"Persian (fa)"``: the English name with the code people are asked to type; the code
    alone when ``langcodes`` has no name for it (its names come from ``language_data``)."""
    try:
        name = langcodes.Language.get(code).display_name()
    except (LookupError, ValueError, ImportError):
        return code
    if not name or name.startswith("Unknown language") or name.lower() == code.lower():
        return code
    return f"{name} ({code})"


def describe(native_required: list[str], working_required: list[str]) -> str:
    """The requirement in words for sign-up and campaign pages; ``""`` when there is none."""
    parts = []
    if native_required:
        parts.append(f"native speakers of {' or '.join(map(language_name, native_required))}")
    if working_required:
        parts.append(f"who also work in {' and '.join(map(language_name, working_required))}")
    text = " ".join(parts)
    return f"{text[:1].upper()}{text[1:]}." if parts else ""
