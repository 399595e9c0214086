"""Pages of replay runs, under ``/ranking/replays/`` (in the ``ranking`` namespace:
``ranking/urls.py`` adds these)."""

from django.urls import path

from core.job_pages import job_paths
from ranking.replays import views

urlpatterns: list = [
    *job_paths(
        "replays/",
        "replay",
        jobs=views.replay_list,
        new=views.replay_new,
        detail=views.replay_detail,
        cancel=views.replay_cancel,
    ),
    path("replays/<int:pk>/curves.svg", views.replay_chart, name="replay_chart"),
]
