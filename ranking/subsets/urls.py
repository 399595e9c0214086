"""Pages of discrimination analyses, under ``/ranking/discrimination/`` (in the ``ranking``
namespace: ``ranking/urls.py`` adds these)."""

from django.urls import path

from ranking.subsets import views

urlpatterns: list = [
    path("discrimination/", views.analysis_list, name="discrimination_list"),
    path("discrimination/new/", views.analysis_new, name="discrimination_new"),
    path("discrimination/<int:pk>/", views.analysis_detail, name="discrimination_detail"),
    path("discrimination/<int:pk>/cancel/", views.analysis_cancel, name="discrimination_cancel"),
    path("discrimination/<int:pk>/curves.svg", views.analysis_chart, name="discrimination_chart"),
    path("discrimination/<int:pk>/discrimination.csv", views.analysis_download, {"fmt": "csv"},
         name="discrimination_csv"),
    path("discrimination/<int:pk>/discrimination.json", views.analysis_download,
         {"fmt": "json"}, name="discrimination_json"),
    # A version's row on its challenge set's page loads this (ranking/subsets/sections.py).
    path("discrimination/section/version/<int:pk>/", views.version_section,
         name="discrimination_section_version"),
]  # fmt: skip
