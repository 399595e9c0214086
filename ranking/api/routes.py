"""REST routes of the ranking app, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from ranking.api.views import RankingViewSet
from ranking.replays.api import ReplayRunViewSet
from ranking.subsets.api import DiscriminationAnalysisViewSet


def register(router: DefaultRouter) -> None:
    router.register("rankings", RankingViewSet, basename="ranking")
    router.register(
        "discrimination-analyses", DiscriminationAnalysisViewSet, basename="discrimination-analysis"
    )
    router.register("replays", ReplayRunViewSet, basename="replay")
