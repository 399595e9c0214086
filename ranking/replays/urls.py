"""Pages of replay runs, under ``/ranking/replays/`` (in the ``ranking`` namespace:
``ranking/urls.py`` adds these)."""

from django.urls import path

from ranking.replays import views

urlpatterns: list = [
    path("replays/", views.replay_list, name="replay_list"),
    path("replays/new/", views.replay_new, name="replay_new"),
    path("replays/<int:pk>/", views.replay_detail, name="replay_detail"),
    path("replays/<int:pk>/cancel/", views.replay_cancel, name="replay_cancel"),
    path("replays/<int:pk>/curves.svg", views.replay_chart, name="replay_chart"),
]
