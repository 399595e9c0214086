from django.urls import include, path

app_name = "lexical"

urlpatterns: list = [
    path("rules/", include("lexical.rules.urls")),
]
