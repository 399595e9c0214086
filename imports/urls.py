from django.urls import path

from imports import views

app_name = "imports"

urlpatterns: list = [
    path("<int:pk>/", views.job_detail, name="job_detail"),
]
