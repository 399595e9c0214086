"""Language codes of corpora: BCP-47-like (``en``, ``pt-BR``, ``zh-Hans``), known to
``langcodes``, stored in their standard form (``EN`` → ``en``, ``pt-br`` → ``pt-BR``) — the same
check as campaigns' language requirements, so a study's target language is always one a
campaign can require."""

from annotation.languages import MAX_CODE, clean_language_code

__all__ = ["MAX_CODE", "clean_language_code"]
