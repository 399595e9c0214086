"""``{% field_grid form "name other" %}``: fields of a job's form side by side in one grid row,
each drawn by ``platform/_field.html`` (label, widget, errors, help text)."""

from __future__ import annotations

from typing import Any

from django import forms, template

register = template.Library()


@register.inclusion_tag("platform/_field_grid.html")
def field_grid(form: forms.BaseForm, names: str) -> dict[str, Any]:
    return {"fields": [form[name] for name in names.split()]}
