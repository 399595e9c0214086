from lexical.mining.urls import urlpatterns as mining_urls

app_name = "lexical"

urlpatterns: list = [*mining_urls]
