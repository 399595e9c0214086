from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from config.api import router
from core import views

# JSON under /api/, Django's pages elsewhere (core/api_errors.py).
handler400 = "core.api_errors.bad_request"
handler403 = "core.api_errors.permission_denied"
handler404 = "core.api_errors.page_not_found"
handler500 = "core.api_errors.server_error"

urlpatterns = [
    # The API first: Django tries the patterns in order, and an annotator's next-item and
    # submit, the most frequent requests by far, would otherwise be matched against every page
    # route before them (bench/README.md, "Annotation load").
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", include(router.urls)),
    path("", views.home, name="home"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("health/", views.health_page, name="health"),
    path("health/probe/", views.probe_worker, name="probe_worker"),
    path("healthz", views.healthz, name="healthz"),
    # Browsers and feed readers ask for /favicon.ico whatever the page's <link rel=icon> says.
    path("favicon.ico", RedirectView.as_view(url=static("img/favicon.svg"), permanent=True)),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/", include("accounts.urls")),
    re_path(r"^admin/search/(?P<rest>difficulty.*)$", views.moved_to("/admin/difficulty/")),
    path("admin/", admin.site.urls),
    path("imports/", include("imports.urls")),
    path("engines/", include("engines.urls")),
    path("annotation/", include("annotation.urls")),
    path("difficulty/", include("difficulty.urls")),
    # Difficulty pages lived under /search/difficulty/ before difficulty became an app.
    re_path(r"^search/difficulty/(?P<rest>.*)$", views.moved_to("/difficulty/")),
    path("search/", include("search.urls")),
    path("lexical/", include("lexical.urls")),
    path("challenge-sets/", include("challenge_sets.urls")),
    path("ranking/", include("ranking.urls")),
]
