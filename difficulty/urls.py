"""Pages of the difficulty app (seed 002), under ``/difficulty/``.

They lived under ``/search/difficulty/`` before difficulty became an app; ``config/urls.py``
redirects the old addresses here.
"""

from django.urls import path

from difficulty import views

app_name = "difficulty"

urlpatterns: list = [
    path("", views.dataset_list, name="dataset_list"),
    path("upload/", views.dataset_upload, name="dataset_upload"),
    path("from-campaign/", views.dataset_from_campaign, name="dataset_from_campaign"),
    path("<int:pk>/", views.dataset_detail, name="dataset_detail"),
    path("<int:pk>/segments/", views.dataset_segments, name="dataset_segments"),
    path("<int:pk>/download.jsonl", views.dataset_download, name="dataset_download"),
    path("<int:pk>/scores.svg", views.dataset_scores_plot, name="dataset_scores_plot"),
    path("<int:pk>/evaluate/", views.dataset_evaluate, name="dataset_evaluate"),
    path("evaluations/<int:pk>/", views.evaluation_detail, name="evaluation_detail"),
    path(
        "evaluations/<int:pk>/chart.svg",
        views.evaluation_plot,
        name="evaluation_plot",
    ),
    path(
        "evaluations/<int:pk>/cancel/",
        views.evaluation_cancel,
        name="evaluation_cancel",
    ),
]
