"""REST routes of the ranking app, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from ranking.api.views import RankingViewSet


def register(router: DefaultRouter) -> None:
    router.register("rankings", RankingViewSet, basename="ranking")
