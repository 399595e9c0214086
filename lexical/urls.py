app_name = "lexical"

urlpatterns: list = []
