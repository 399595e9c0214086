from django.urls import include, path

from lexical import views
from lexical.concepts.urls import concept_patterns, selection_patterns
from lexical.mining.urls import urlpatterns as mining_urls

app_name = "lexical"

urlpatterns: list = [
    path("", views.home, name="home"),
    path("corpora/", include("lexical.corpora.urls")),
    *mining_urls,
    path("concepts/", include(concept_patterns)),
    path("selections/", include(selection_patterns)),
    path("rules/", include("lexical.rules.urls")),
    path("evaluation/", include("lexical.evaluation.urls")),
    path("rule-validation/", include("lexical.studies.rule_validation.urls")),
    path("selection-studies/", include("lexical.studies.selection_study.urls")),
    path("dtails/", include("lexical.dtails.urls")),
]
