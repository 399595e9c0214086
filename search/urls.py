from django.urls import path

from core.job_pages import control_paths
from search.breaker import views as breaker_views
from search.breaker.transfer import views as transfer_views
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
    path("runs/new/", run_views.RunCreate.as_view(), name="run_create"),
    path("runs/<int:pk>/", run_views.run_detail, name="run_detail"),
    path("runs/<int:pk>/results/", run_views.run_results, name="run_results"),
    path("runs/<int:pk>/topics/<int:arm>/", run_views.run_topic_texts, name="run_topic_texts"),
    path("runs/<int:pk>/chart.svg", run_views.run_chart, name="run_chart"),
    path(
        "runs/<int:pk>/calibration.svg",
        run_views.run_calibration_chart,
        name="run_calibration_chart",
    ),
    *control_paths("runs/", run_views.run_control, "run"),
    path("runs/<int:pk>/send/", run_views.run_send, name="run_send"),
    path("runs/<int:pk>/export/pulls.jsonl", run_views.run_export_pulls, name="run_export_pulls"),
    path("runs/<int:pk>/export/top-k.json", run_views.run_export_top_k, name="run_export_top_k"),
    # MT-breaker runs (seed 001)
    path("breaker/", breaker_views.run_list, name="breaker_list"),
    path("breaker/new/", breaker_views.RunCreate.as_view(), name="breaker_create"),
    path("breaker/comparison/", breaker_views.comparison, name="breaker_comparison"),
    path(
        "breaker/comparison/chart.svg",
        breaker_views.comparison_chart,
        name="breaker_comparison_chart",
    ),
    path("breaker/comparison/send/", breaker_views.comparison_send, name="breaker_comparison_send"),
    path(
        "breaker/comparison/statistics/",
        breaker_views.comparison_statistics,
        name="breaker_comparison_statistics",
    ),
    path(
        "breaker/comparison/refresh-humans/",
        breaker_views.comparison_refresh,
        name="breaker_comparison_refresh",
    ),
    path(
        "breaker/comparison/calibration/",
        breaker_views.comparison_calibration,
        name="breaker_comparison_calibration",
    ),
    path("breaker/<int:pk>/send/", breaker_views.run_send, name="breaker_send"),
    path(
        "breaker/<int:pk>/refresh-humans/",
        breaker_views.run_refresh_humans,
        name="breaker_refresh_humans",
    ),
    path(
        "breaker/<int:pk>/calibration/", breaker_views.run_calibration, name="breaker_calibration"
    ),
    path(
        "breaker/comparison/tradeoff.svg",
        breaker_views.comparison_tradeoff_chart,
        name="breaker_comparison_tradeoff",
    ),
    path("breaker/<int:pk>/", breaker_views.run_detail, name="breaker_detail"),
    path("breaker/<int:pk>/statistics/", breaker_views.run_statistics, name="breaker_statistics"),
    path("breaker/<int:pk>/results/", breaker_views.run_results, name="breaker_results"),
    path("breaker/<int:pk>/chart.svg", breaker_views.run_chart, name="breaker_chart"),
    path("breaker/<int:pk>/chains/<int:index>/", breaker_views.chain_detail, name="breaker_chain"),
    *control_paths("breaker/", breaker_views.run_control, "breaker"),
    path("breaker/<int:pk>/export.jsonl", breaker_views.run_export, name="breaker_export"),
    path("breaker/<int:pk>/samples/", breaker_views.run_export_samples, name="breaker_samples"),
    # Transfers of MT-breaker texts (seed 001 §3.3–3.5)
    path("breaker/transfers/", transfer_views.transfer_list, name="breaker_transfer_list"),
    path(
        "breaker/transfers/new/",
        transfer_views.TransferCreate.as_view(),
        name="breaker_transfer_create",
    ),
    path("breaker/transfers/<int:pk>/", transfer_views.transfer_detail, name="breaker_transfer"),
    path(
        "breaker/transfers/<int:pk>/matrix/",
        transfer_views.transfer_matrix,
        name="breaker_transfer_matrix",
    ),
    path(
        "breaker/transfers/<int:pk>/cancel/",
        transfer_views.transfer_cancel,
        name="breaker_transfer_cancel",
    ),
    path(
        "breaker/transfers/<int:pk>/matrix.csv",
        transfer_views.transfer_csv,
        name="breaker_transfer_csv",
    ),
    path(
        "breaker/transfers/<int:pk>/results.jsonl",
        transfer_views.transfer_jsonl,
        name="breaker_transfer_jsonl",
    ),
]
