from django.urls import path

from lexical.concepts import views

concept_patterns = [
    path("", views.concept_list, name="concept_list"),
    path("<int:pk>/", views.concept_detail, name="concept_detail"),
    path("<int:pk>/merge/", views.concept_merge, name="concept_merge"),
    path("<int:pk>/split/", views.concept_split, name="concept_split"),
    path("<int:pk>/reject/", views.concept_reject, name="concept_reject"),
    path("<int:pk>/restore/", views.concept_restore, name="concept_restore"),
    path(
        "<int:pk>/variations/<int:variation>/drop/",
        views.variation_drop,
        name="variation_drop",
    ),
    path(
        "<int:pk>/variations/<int:variation>/restore/",
        views.variation_restore,
        name="variation_restore",
    ),
]

selection_patterns = [
    path("", views.selection_list, name="selection_list"),
    path("new/", views.selection_create, name="selection_create"),
    path("<int:pk>/", views.selection_detail, name="selection_detail"),
]
