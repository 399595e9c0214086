"""Sections one app adds to another app's page, without the page's app importing it.

An app that sits on top (``ranking`` reads challenge sets, difficulty and search, and nothing may
import it) registers a :class:`PageSection` under a page key in its ``AppConfig.ready()``; the
page's template names its key once, ``{% page_sections "challenge_sets.version" version %}``
(``core/templatetags/page_sections.py``), and every section registered under it is drawn there.

A section is a template and a context function ``(request, obj) -> dict | None``: it decides
what the section shows of ``obj`` (the page's object: a version, an evaluation, a comparison
name) for this request's user, and returns None to show nothing (the user may not see it, or
there is nothing to say). Keep it cheap: a page draws it on every view; slow parts belong in
a URL of the registering app that the section loads with htmx.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.template.loader import render_to_string

__all__ = ["PageSection", "register_section", "render_sections", "sections_for"]

# "app.page": lower-case words, so a misspelt key in a template or a registration stands out.
_PAGE_KEY = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")

SectionContext = Callable[[HttpRequest, Any], Mapping[str, Any] | None]


@dataclass(frozen=True)
class PageSection:
    page: str
    name: str  # unique per page: registering the same name again replaces it (ready() re-runs)
    template: str
    context: SectionContext
    order: int = 100


_SECTIONS: dict[str, dict[str, PageSection]] = {}


def _check_key(page: str) -> str:
    if not _PAGE_KEY.match(page):
        raise ValueError(f"a page key looks like 'app.page', not {page!r}")
    return page


def register_section(
    page: str, name: str, template: str, context: SectionContext, *, order: int = 100
) -> PageSection:
    section = PageSection(_check_key(page), name, template, context, order)
    _SECTIONS.setdefault(page, {})[name] = section
    return section


def sections_for(page: str) -> list[PageSection]:
    found = _SECTIONS.get(_check_key(page), {}).values()
    return sorted(found, key=lambda section: (section.order, section.name))


def render_sections(page: str, request: HttpRequest, obj: Any) -> str:
    """The HTML of every section of ``page`` that has something to show about ``obj``."""
    parts = []
    for section in sections_for(page):
        context = section.context(request, obj)
        if context is not None:
            parts.append(render_to_string(section.template, dict(context), request=request))
    return "".join(parts)
