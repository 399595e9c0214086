from django.urls import path

from lexical.studies.selection_study import views

urlpatterns = [
    path("", views.study_list, name="selection_study_list"),
    path("new/", views.study_create, name="selection_study_create"),
    path("<int:pk>/", views.study_detail, name="selection_study_detail"),
]
