"""REST routes of background imports, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from imports.api.views import ImportJobViewSet


def register(router: DefaultRouter) -> None:
    router.register("import-jobs", ImportJobViewSet, basename="import-job")
