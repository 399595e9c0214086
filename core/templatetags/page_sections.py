"""``{% page_sections "app.page" obj %}``: the sections other apps registered for this page
(``core/sections.py``)."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

from core.sections import render_sections

register = template.Library()


@register.simple_tag(takes_context=True)
def page_sections(context: template.Context, page: str, obj: Any) -> SafeString:
    request = context.get("request")
    if request is None:  # a template rendered outside a request has no user to decide for
        return mark_safe("")
    # Each section is a template rendered with autoescaping: its HTML is safe to join.
    return mark_safe(render_sections(page, request, obj))
