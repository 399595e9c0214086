"""Mining pages, included by ``lexical/urls.py`` under /lexical/mining/."""

from django.urls import path, re_path

from lexical.mining import views

urlpatterns = [
    path("mining/", views.job_list, name="mining_list"),
    re_path(r"^mining/new/?$", views.JobCreate.as_view(), name="mining_new"),
    path("mining/<int:pk>/", views.job_detail, name="mining_job"),
    path("mining/<int:pk>/cancel/", views.job_cancel, name="mining_cancel"),
]
