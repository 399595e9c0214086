from django.urls import include, path

app_name = "lexical"

urlpatterns: list = [
    path("evaluation/", include("lexical.evaluation.urls")),
    path("rules/", include("lexical.rules.urls")),
]
