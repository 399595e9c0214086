"""Pages of discrimination analyses, under ``/ranking/discrimination/`` (in the ``ranking``
namespace: ``ranking/urls.py`` adds these)."""

from django.urls import path

from core.job_pages import job_paths
from ranking.subsets import views

urlpatterns: list = [
    *job_paths(
        "discrimination/",
        "discrimination",
        jobs=views.analysis_list,
        new=views.analysis_new,
        detail=views.analysis_detail,
        cancel=views.analysis_cancel,
    ),
    path("discrimination/<int:pk>/curves.svg", views.analysis_chart, name="discrimination_chart"),
    path("discrimination/<int:pk>/discrimination.csv", views.analysis_download, {"fmt": "csv"},
         name="discrimination_csv"),
    path("discrimination/<int:pk>/discrimination.json", views.analysis_download,
         {"fmt": "json"}, name="discrimination_json"),
    # A version's row on its challenge set's page loads this (ranking/subsets/sections.py).
    path("discrimination/section/version/<int:pk>/", views.version_section,
         name="discrimination_section_version"),
]  # fmt: skip
