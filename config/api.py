"""The one REST router. Each app registers its viewsets in ``<app>/api/routes.py``."""

from importlib import import_module

from rest_framework.routers import DefaultRouter


class IdRouter(DefaultRouter):
    """A detail URL takes digits unless its viewset names another lookup pattern, so
    ``/api/search-runs/abc/`` is the API's JSON 404, never a server error from ``int("abc")``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._default_value_pattern = "[0-9]+"


router = IdRouter()

# Annotation first: its routes are matched first, and they serve most requests (annotators'
# next-item and submit).
for app_name in (
    "annotation",
    "imports",
    "engines",
    "difficulty",
    "search",
    "lexical",
    "challenge_sets",
    "ranking",
):
    import_module(f"{app_name}.api.routes").register(router)
