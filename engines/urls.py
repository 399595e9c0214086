from django.urls import path

from engines import views

app_name = "engines"

urlpatterns = [
    path("", views.engine_list, name="list"),
    path("new/", views.engine_create, name="create"),
    path("<str:name>/", views.engine_detail, name="detail"),
    path("<str:name>/edit/", views.engine_edit, name="edit"),
    path("<str:name>/test/", views.engine_test, name="test"),
]
