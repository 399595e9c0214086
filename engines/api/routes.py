"""REST routes of the engines app, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from engines.api.views import EngineViewSet


def register(router: DefaultRouter) -> None:
    router.register("engines", EngineViewSet, basename="engine")
