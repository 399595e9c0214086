"""REST routes of the difficulty app, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from difficulty.api.views import DifficultyDatasetViewSet, DifficultyEvaluationViewSet


def register(router: DefaultRouter) -> None:
    router.register("difficulty-datasets", DifficultyDatasetViewSet, basename="difficulty-dataset")
    router.register(
        "difficulty-evaluations", DifficultyEvaluationViewSet, basename="difficulty-evaluation"
    )
