from django.urls import path

from annotation import dashboard_views, views

app_name = "annotation"

urlpatterns = [
    # Admin pages.
    path("campaigns/", views.campaigns, name="campaigns"),
    path("campaigns/new/", views.campaign_create, name="campaign_create"),
    path("campaigns/<int:campaign_id>/", views.campaign_detail, name="campaign_detail"),
    path(
        "campaigns/<int:campaign_id>/settings/",
        views.campaign_settings,
        name="campaign_settings",
    ),
    path(
        "campaigns/<int:campaign_id>/items/import/",
        views.campaign_import_items,
        name="campaign_import_items",
    ),
    path(
        "campaigns/<int:campaign_id>/checks/generate/",
        views.campaign_generate_checks,
        name="campaign_generate_checks",
    ),
    path(
        "enrollments/<int:enrollment_id>/<slug:action>/",
        views.enrollment_action,
        name="enrollment_action",
    ),
    path("annotators/", views.annotators, name="annotators"),
    # Live dashboard, charts and export downloads (annotation/dashboard_views.py).
    path("dashboard/", dashboard_views.dashboard_index, name="dashboard"),
    path("dashboard/<int:pk>/", dashboard_views.dashboard_campaign, name="dashboard_campaign"),
    path(
        "dashboard/<int:pk>/charts/<slug:name>.svg",
        dashboard_views.dashboard_chart,
        name="dashboard_chart",
    ),
    path("dashboard/<int:pk>/export/", dashboard_views.export_download, name="export_download"),
    # Sign-up (public) and annotator pages.
    path("join/<slug:slug>/", views.signup, name="signup"),
    path("tasks/", views.my_tasks, name="my_tasks"),
    path("campaigns/<int:campaign_id>/next/", views.annotate_next, name="annotate_next"),
    path("campaigns/<int:campaign_id>/mine/", views.my_annotations, name="my_annotations"),
    path("campaigns/<int:campaign_id>/finish/", views.finish, name="finish"),
    path("items/<int:item_id>/", views.annotate, name="annotate"),
    path("items/<int:item_id>/draft/", views.save_draft, name="save_draft"),
    path("items/<int:item_id>/heartbeat/", views.heartbeat, name="heartbeat"),
    path("items/<int:item_id>/submit/", views.submit, name="submit"),
]
