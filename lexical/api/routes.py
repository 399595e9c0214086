"""REST routes of the lexical app, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from lexical.api.evaluation import LexicalEvaluationViewSet
from lexical.api.rules import RuleJobViewSet, RuleViewSet


def register(router: DefaultRouter) -> None:
    router.register("lexical-evaluations", LexicalEvaluationViewSet, basename="lexical-evaluation")
    router.register("lexical-rule-jobs", RuleJobViewSet, basename="lexical-rule-job")
    router.register("lexical-rules", RuleViewSet, basename="lexical-rule")
