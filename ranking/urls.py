"""Pages of the ranking app, under ``/ranking/``."""

from django.urls import path

from core.job_pages import job_paths
from ranking import views
from ranking.replays.urls import urlpatterns as replay_urls
from ranking.subsets.urls import urlpatterns as discrimination_urls

app_name = "ranking"

urlpatterns: list = [
    *job_paths(
        "",
        "ranking",
        jobs=views.ranking_list,
        new=views.ranking_new,
        detail=views.ranking_detail,
        cancel=views.ranking_cancel,
    ),
    path("<int:pk>/heatmap.svg", views.ranking_chart, {"chart": "heatmap"}, name="heatmap"),
    path("<int:pk>/means.svg", views.ranking_chart, {"chart": "means"}, name="means"),
    path("<int:pk>/ranking.csv", views.ranking_download, {"fmt": "csv"}, name="download_csv"),
    path("<int:pk>/ranking.tex", views.ranking_download, {"fmt": "latex"}, name="download_latex"),
    path("<int:pk>/ranking.typ", views.ranking_download, {"fmt": "typst"}, name="download_typst"),
    path("<int:pk>/ranking.json", views.ranking_download, {"fmt": "json"}, name="download_json"),
]
urlpatterns += discrimination_urls
urlpatterns += replay_urls
