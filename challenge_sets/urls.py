from django.urls import path

from challenge_sets import views

app_name = "challenge_sets"

urlpatterns = [
    path("", views.index, name="index"),
    path("new/", views.set_new, name="set_new"),
    path("<int:pk>/", views.set_detail, name="set_detail"),
    path("<int:pk>/difficulty.svg", views.difficulty_chart, name="difficulty_chart"),
    path("<int:pk>/add/<slug:source>/", views.add_from_source, name="add_from_source"),
    path("<int:pk>/send/", views.send, name="send"),
    path("<int:pk>/refresh/", views.refresh, name="refresh"),
    path("<int:pk>/decide/", views.decide, name="decide"),
    path("<int:pk>/freeze/", views.freeze, name="freeze"),
    path("<int:pk>/items/<int:item_id>/", views.item_detail, name="item_detail"),
    path("<int:pk>/v<int:number>/<slug:fmt>/", views.download, name="download"),
]
