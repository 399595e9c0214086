"""REST routes of the lexical app, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from lexical.api.mining import MiningJobViewSet


def register(router: DefaultRouter) -> None:
    router.register("lexical-mining-jobs", MiningJobViewSet, basename="lexical-mining-job")
