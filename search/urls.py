from django.urls import path

from search.runs import views as run_views
from search.topics import views as topic_views

app_name = "search"

urlpatterns: list = [
    # Topic trees and samples (seed 000)
    path("topics/", topic_views.tree_list, name="topic_list"),
    path("topics/import/", topic_views.tree_import, name="topic_import"),
    path("topics/generate/", topic_views.tree_generate, name="topic_generate"),
    path("topics/<int:pk>/", topic_views.tree_detail, name="topic_tree"),
    path("topics/<int:pk>/children/", topic_views.tree_children, name="topic_children"),
    path("topics/<int:pk>/search/", topic_views.tree_search, name="topic_search"),
    path("topics/<int:pk>/corpus/", topic_views.corpus_upload, name="topic_corpus"),
    path("topics/<int:pk>/retry/", topic_views.generation_retry, name="topic_retry"),
    path("topics/topic/<int:pk>/", topic_views.topic_detail, name="topic_detail"),
    # Search runs (seed 000)
    path("runs/", run_views.run_list, name="run_list"),
    path("runs/new/", run_views.run_create, name="run_create"),
    path("runs/<int:pk>/", run_views.run_detail, name="run_detail"),
    path("runs/<int:pk>/results/", run_views.run_results, name="run_results"),
    path("runs/<int:pk>/topics/<int:arm>/", run_views.run_topic_texts, name="run_topic_texts"),
    path("runs/<int:pk>/chart.svg", run_views.run_chart, name="run_chart"),
    path(
        "runs/<int:pk>/calibration.svg",
        run_views.run_calibration_chart,
        name="run_calibration_chart",
    ),
    path("runs/<int:pk>/pause/", run_views.run_control, {"action": "pause"}, name="run_pause"),
    path("runs/<int:pk>/resume/", run_views.run_control, {"action": "resume"}, name="run_resume"),
    path("runs/<int:pk>/cancel/", run_views.run_control, {"action": "cancel"}, name="run_cancel"),
    path("runs/<int:pk>/send/", run_views.run_send, name="run_send"),
    path("runs/<int:pk>/export/pulls.jsonl", run_views.run_export_pulls, name="run_export_pulls"),
    path("runs/<int:pk>/export/top-k.json", run_views.run_export_top_k, name="run_export_top_k"),
]
