"""REST routes of the ranking app, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from ranking.api.views import DiscriminationAnalysisViewSet, RankingViewSet
from ranking.replays.api import ReplayRunViewSet


def register(router: DefaultRouter) -> None:
    router.register("rankings", RankingViewSet, basename="ranking")
    router.register(
        "discrimination-analyses", DiscriminationAnalysisViewSet, basename="discrimination-analysis"
    )
    router.register("replays", ReplayRunViewSet, basename="replay")
