"""URLs of rule-validation studies, included under /lexical/rule-validation/."""

from django.urls import path

from lexical.studies.rule_validation import views

urlpatterns = [
    path("", views.study_list, name="rule_validation_list"),
    path("new/", views.study_create, name="rule_validation_create"),
    path("<int:pk>/", views.study_detail, name="rule_validation"),
    path("<int:pk>/results.csv", views.study_csv, name="rule_validation_csv"),
]
