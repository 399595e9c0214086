from django.urls import path

from lexical.corpora import views

urlpatterns = [
    path("", views.corpus_list, name="corpus_list"),
    path("import/", views.corpus_import, name="corpus_import"),
    path("<int:pk>/", views.corpus_detail, name="corpus_detail"),
]
