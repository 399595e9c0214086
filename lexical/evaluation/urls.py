"""Pages of model evaluations, included under ``/lexical/evaluation/`` (namespace
``lexical:evaluation``)."""

from django.urls import path

from lexical.evaluation import views

app_name = "evaluation"

urlpatterns = [
    path("", views.evaluation_list, name="list"),
    path("chart.svg", views.overview_chart, name="overview_chart"),
    path("new/", views.EvaluationCreate.as_view(), name="create"),
    path("<int:pk>/", views.evaluation_detail, name="detail"),
    path("<int:pk>/results/", views.evaluation_results, name="results"),
    path("<int:pk>/chart.svg", views.evaluation_chart, name="chart"),
    path("<int:pk>/bias-<int:size>.svg", views.bias_chart, name="bias_chart"),
    path("<int:pk>/cancel/", views.evaluation_cancel, name="cancel"),
    path("<int:pk>/answers.csv", views.answers_csv, name="answers_csv"),
    path("<int:pk>/summary.csv", views.summary_csv, name="summary_csv"),
]
