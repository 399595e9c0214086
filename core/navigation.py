"""The navigation shows only areas that exist.

Each app declares its areas on its ``AppConfig`` as ``areas = [Area(...)]``; an app that has no
pages yet declares none, so nothing links to a page that does not exist. The dashboard and the
top navigation are both built from these declarations.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.urls import reverse


@dataclass(frozen=True)
class Area:
    label: str
    url_name: str
    description: str = ""
    staff_only: bool = True
    order: int = 100
    # A permission the user also needs (e.g. granted to a group by an admin); "" for none.
    permission: str = ""

    def url(self) -> str:
        return reverse(self.url_name)


def areas_for(user) -> list[Area]:
    if not user.is_authenticated:
        return []
    found = [
        area
        for config in apps.get_app_configs()
        for area in getattr(config, "areas", ())
        if (user.is_staff or not area.staff_only)
        and (not area.permission or user.has_perm(area.permission))
    ]
    return sorted(found, key=lambda area: (area.order, area.label))


def navigation(request) -> dict:
    """Template context processor: the areas this user may open."""
    user = getattr(request, "user", None)
    if user is None:
        return {"nav_areas": []}
    path = request.path
    links = []
    for area in areas_for(user):
        url = area.url()
        links.append((area, url, path.startswith(url)))
    return {"nav_areas": links}
