"""Pages of the ranking app, under ``/ranking/``."""

from django.urls import path

from ranking import views
from ranking.replays.urls import urlpatterns as replay_urls
from ranking.subsets.urls import urlpatterns as discrimination_urls

app_name = "ranking"

urlpatterns: list = [
    path("", views.ranking_list, name="ranking_list"),
    path("new/", views.ranking_new, name="ranking_new"),
    path("<int:pk>/", views.ranking_detail, name="ranking_detail"),
    path("<int:pk>/cancel/", views.ranking_cancel, name="ranking_cancel"),
    path("<int:pk>/heatmap.svg", views.ranking_chart, {"chart": "heatmap"}, name="heatmap"),
    path("<int:pk>/means.svg", views.ranking_chart, {"chart": "means"}, name="means"),
    path("<int:pk>/ranking.csv", views.ranking_download, {"fmt": "csv"}, name="download_csv"),
    path("<int:pk>/ranking.tex", views.ranking_download, {"fmt": "latex"}, name="download_latex"),
    path("<int:pk>/ranking.typ", views.ranking_download, {"fmt": "typst"}, name="download_typst"),
    path("<int:pk>/ranking.json", views.ranking_download, {"fmt": "json"}, name="download_json"),
]
urlpatterns += discrimination_urls
urlpatterns += replay_urls
