"""REST routes of the ranking app, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from ranking.api.views import DiscriminationAnalysisViewSet, RankingViewSet


def register(router: DefaultRouter) -> None:
    router.register("rankings", RankingViewSet, basename="ranking")
    router.register(
        "discrimination-analyses", DiscriminationAnalysisViewSet, basename="discrimination-analysis"
    )
