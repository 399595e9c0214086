"""core.sections: an app draws a section on another app's page through a registered key."""

from __future__ import annotations

import copy

import pytest
from django.contrib.auth.models import AnonymousUser
from django.template import Context, Template
from django.test import RequestFactory

from core import sections
from tests.factories import UserFactory

PAGE = '{% load page_sections %}<main>{% page_sections "tests.page" obj %}</main>'


@pytest.fixture
def registry(monkeypatch, settings, tmp_path):
    monkeypatch.setattr(sections, "_SECTIONS", {})
    (tmp_path / "section.html").write_text("<p>{{ label }} of {{ obj }}</p>", encoding="utf-8")
    templates = copy.deepcopy(settings.TEMPLATES)
    templates[0]["DIRS"] = [tmp_path, *templates[0]["DIRS"]]
    settings.TEMPLATES = templates


def _render(user, obj) -> str:
    request = RequestFactory().get("/")
    request.user = user
    return Template(PAGE).render(Context({"request": request, "obj": obj}))


@pytest.mark.django_db
def test_registered_sections_draw_in_order_for_whom_their_context_says(registry):
    def staff_only(request, obj):
        return {"label": "<b>staff</b>", "obj": obj} if request.user.is_staff else None

    sections.register_section("tests.page", "late", "section.html", staff_only, order=200)
    sections.register_section(
        "tests.page", "early", "section.html", lambda request, obj: {"label": "all", "obj": obj}
    )
    sections.register_section(  # ready() running again replaces, never doubles
        "tests.page", "early", "section.html", lambda request, obj: {"label": "all", "obj": obj}
    )

    staff = _render(UserFactory(is_staff=True), "v1")
    anonymous = _render(AnonymousUser(), "v1")

    assert staff == "<main><p>all of v1</p><p>&lt;b&gt;staff&lt;/b&gt; of v1</p></main>"
    assert anonymous == "<main><p>all of v1</p></main>"


def test_a_page_without_sections_draws_nothing_and_keys_are_checked(registry):
    assert _render(AnonymousUser(), "v1") == "<main></main>"
    with pytest.raises(ValueError, match=r"'app\.page'"):
        sections.register_section("Version Page", "x", "section.html", lambda r, o: {})
