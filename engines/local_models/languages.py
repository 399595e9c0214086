"""Language codes as each family of local MT model spells them.

Pure Python (``langcodes`` only, no torch): the platform speaks BCP-47 (``en``, ``pt-BR``,
``zh-Hant``); each model family wants its own spelling:

* ``nllb`` (NLLB-200): FLORES-200 codes, ISO 639-3 + ISO 15924 script, ``eng_Latn``. The source
  code is the tokenizer's ``src_lang``; the target code is the first generated token.
* ``m2m100`` (M2M-100): ISO 639-1 codes (``en``); the tokenizer writes ``__en__`` tokens, the
  target is the first generated token.
* ``madlad`` (MADLAD-400, a T5): the target code as a ``<2xx>`` prefix of the source text
  (``<2de> Hello``); the source language is not given.
* ``marian`` and ``plain`` (one model per pair, or any seq2seq model): no codes.

An engine's ``lang_codes`` parameter (``{"en": "eng_Latn"}``) overrides the mapping for a code,
which is also how a language this table gets wrong is fixed without a release.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import langcodes

__all__ = ["FAMILIES", "LanguageCodeError", "model_language_code"]

FAMILIES = ("nllb", "m2m100", "madlad", "marian", "plain")

_FLORES = re.compile(r"^[a-z]{3}_[A-Z][a-z]{3}$")

# NLLB names macrolanguages by the variety it was trained on, where the ISO 639-3 code of the
# macrolanguage (what langcodes gives) is not in FLORES-200.
_NLLB_VARIETY = {
    "ara": "arb",  # Modern Standard Arabic
    "fas": "pes",  # Western Persian
    "lav": "lvs",  # Standard Latvian
    "msa": "zsm",  # Standard Malay
    "nor": "nob",  # Norwegian Bokmål
    "swa": "swh",  # Swahili
    "uzb": "uzn",  # Northern Uzbek
    "mon": "khk",  # Halh Mongolian
    "sqi": "als",  # Tosk Albanian
    "pus": "pbt",  # Southern Pashto
    "aze": "azj",  # North Azerbaijani
    "orm": "gaz",  # West Central Oromo
    "que": "quy",  # Ayacucho Quechua
    "grn": "gug",  # Paraguayan Guaraní
    "yid": "ydd",  # Eastern Yiddish
    "kur": "kmr",  # Northern Kurdish (Kurmanji)
}
# CLDR's likely script for Korean is the umbrella "Kore"; FLORES writes Hangul.
_NLLB_SCRIPT = {"Kore": "Hang"}


class LanguageCodeError(ValueError):
    """A platform language code that has no spelling in the model's family."""


def _language(code: str) -> langcodes.Language:
    try:
        return langcodes.Language.get(code)
    except (ValueError, LookupError) as exc:
        raise LanguageCodeError(f"{code!r} is not a BCP-47 language code") from exc


def _nllb(code: str) -> str:
    if _FLORES.match(code):
        return code
    language = _language(code)
    alpha3 = language.to_alpha3()
    script = language.maximize().script
    if not script:
        raise LanguageCodeError(f"no script is known for {code!r}; set lang_codes for it")
    alpha3 = _NLLB_VARIETY.get(alpha3, alpha3)
    return f"{alpha3}_{_NLLB_SCRIPT.get(script, script)}"


def _iso639_1(code: str) -> str:
    language = _language(code)
    if not language.language or len(language.language) not in (2, 3):
        raise LanguageCodeError(f"{code!r} names no language")
    return language.language


def model_language_code(family: str, code: str, overrides: Mapping[str, str] | None = None) -> str:
    """``code`` (BCP-47) as ``family`` spells it; ``""`` for families that take no code."""
    if overrides and code in overrides:
        return overrides[code]
    if family == "nllb":
        return _nllb(code)
    if family in ("m2m100", "madlad"):
        return _iso639_1(code)
    if family in ("marian", "plain"):
        return ""
    raise LanguageCodeError(f"unknown model family {family!r}")
