"""REST routes of the lexical app, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from lexical.api.evaluation import LexicalEvaluationViewSet


def register(router: DefaultRouter) -> None:
    router.register("lexical-evaluations", LexicalEvaluationViewSet, basename="lexical-evaluation")
