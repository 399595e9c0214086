"""Who may take a seed 004 study of one target language.

The paper recruits native speakers of the target language for both of its studies (rule
validation and lexical selection). A study campaign therefore requires them by default
(``annotation``'s ``required_native_languages``), and on request puts both studies of a language
in one exclusive group, so that one person takes part in only one of them (their judgements on
the rules then cannot shape their choices, or the other way round).
"""

from __future__ import annotations

from typing import Any

from django.utils.text import slugify

__all__ = ["exclusive_group", "recruiting_settings"]


def exclusive_group(tgt_lang: str) -> str:
    """The group every seed 004 study of ``tgt_lang`` joins when one study per person is asked."""
    return slugify(f"lexical-{tgt_lang}")[:50]


def recruiting_settings(
    tgt_lang: str, *, native_speakers: bool, one_study_per_person: bool
) -> dict[str, Any]:
    """Campaign settings for a study of ``tgt_lang`` (see the module docstring)."""
    return {
        "required_native_languages": [tgt_lang] if native_speakers and tgt_lang else [],
        "exclusive_group": exclusive_group(tgt_lang) if one_study_per_person else "",
    }
