from django.urls import path

from lexical.dtails import views

urlpatterns = [
    path("", views.dtails_home, name="dtails"),
    path("examples/<str:filename>", views.example_file, name="dtails_example"),
    path("selections/<int:pk>.csv", views.selection_csv, name="dtails_selection_csv"),
    path("studies/<int:pk>/released.csv", views.study_released_csv, name="dtails_study_csv"),
    path(
        "studies/<int:pk>/extended.csv",
        views.study_extended_csv,
        name="dtails_study_extended_csv",
    ),
]
