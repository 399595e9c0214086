"""URLs of rule generation, included under /lexical/rules/ with the app's namespace."""

from django.urls import path

from lexical.rules import views

urlpatterns = [
    path("", views.job_list, name="rule_job_list"),
    path("new/", views.JobCreate.as_view(), name="rule_job_create"),
    path("jobs/<int:pk>/", views.job_detail, name="rule_job"),
    path("jobs/<int:pk>/concepts/", views.job_concept_table, name="rule_job_concepts"),
    path("jobs/<int:pk>/cancel/", views.job_cancel, name="rule_job_cancel"),
    path("concepts/<int:concept_id>/", views.concept_rule_table, name="concept_rules"),
]
