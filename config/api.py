"""The one REST router. Each app registers its viewsets in ``<app>/api/routes.py``."""

from importlib import import_module

from rest_framework.routers import DefaultRouter

router = DefaultRouter()

for app_name in ("engines", "annotation", "difficulty", "search", "lexical", "challenge_sets"):
    import_module(f"{app_name}.api.routes").register(router)
