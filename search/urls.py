from django.urls import path

from search import views

app_name = "search"

urlpatterns: list = [
    # Difficulty datasets and DEC evaluations (seed 002).
    path("difficulty/", views.dataset_list, name="dataset_list"),
    path("difficulty/upload/", views.dataset_upload, name="dataset_upload"),
    path("difficulty/from-campaign/", views.dataset_from_campaign, name="dataset_from_campaign"),
    path("difficulty/<int:pk>/", views.dataset_detail, name="dataset_detail"),
    path("difficulty/<int:pk>/segments/", views.dataset_segments, name="dataset_segments"),
    path("difficulty/<int:pk>/scores.svg", views.dataset_scores_plot, name="dataset_scores_plot"),
    path("difficulty/<int:pk>/evaluate/", views.dataset_evaluate, name="dataset_evaluate"),
    path("difficulty/evaluations/<int:pk>/", views.evaluation_detail, name="evaluation_detail"),
    path(
        "difficulty/evaluations/<int:pk>/chart.svg",
        views.evaluation_plot,
        name="evaluation_plot",
    ),
    path(
        "difficulty/evaluations/<int:pk>/cancel/",
        views.evaluation_cancel,
        name="evaluation_cancel",
    ),
]
