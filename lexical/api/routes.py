"""REST routes of the lexical app, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from lexical.api.concepts import ConceptViewSet, ExampleSelectionViewSet
from lexical.api.corpora import ParallelCorpusViewSet
from lexical.api.dtails import DtailsViewSet
from lexical.api.evaluation import LexicalEvaluationViewSet
from lexical.api.mining import MiningJobViewSet
from lexical.api.rule_validation import RuleValidationStudyViewSet
from lexical.api.rules import RuleJobViewSet, RuleViewSet
from lexical.api.selection_studies import SelectionStudyViewSet


def register(router: DefaultRouter) -> None:
    router.register("lexical-corpora", ParallelCorpusViewSet, basename="lexical-corpus")
    router.register("lexical-concepts", ConceptViewSet, basename="lexical-concept")
    router.register("lexical-mining-jobs", MiningJobViewSet, basename="lexical-mining-job")
    router.register("lexical-selections", ExampleSelectionViewSet, basename="lexical-selection")
    router.register("lexical-rule-jobs", RuleJobViewSet, basename="lexical-rule-job")
    router.register("lexical-rules", RuleViewSet, basename="lexical-rule")
    router.register("lexical-evaluations", LexicalEvaluationViewSet, basename="lexical-evaluation")
    router.register(
        "lexical-rule-validations",
        RuleValidationStudyViewSet,
        basename="lexical-rule-validation",
    )
    router.register(
        "lexical-selection-studies", SelectionStudyViewSet, basename="lexical-selection-study"
    )
    router.register("lexical-dtails", DtailsViewSet, basename="lexical-dtails")
