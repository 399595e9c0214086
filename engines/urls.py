app_name = "engines"

urlpatterns: list = []
