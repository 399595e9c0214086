from django.urls import path, register_converter

from annotation.item_refs import ItemRefConverter
from annotation.views import annotate, dashboard, signup, staff

# Annotators reach items by reference, never by id (annotation/item_refs.py).
register_converter(ItemRefConverter, "item_ref")

app_name = "annotation"

urlpatterns = [
    # Admin pages.
    path("campaigns/", staff.campaigns, name="campaigns"),
    path("campaigns/new/", staff.campaign_create, name="campaign_create"),
    path("campaigns/<int:campaign_id>/", staff.campaign_detail, name="campaign_detail"),
    path(
        "campaigns/<int:campaign_id>/settings/",
        staff.campaign_settings,
        name="campaign_settings",
    ),
    path(
        "campaigns/<int:campaign_id>/items/import/",
        staff.campaign_import_items,
        name="campaign_import_items",
    ),
    path(
        "campaigns/<int:campaign_id>/checks/generate/",
        staff.campaign_generate_checks,
        name="campaign_generate_checks",
    ),
    path(
        "enrollments/<int:enrollment_id>/<slug:action>/",
        staff.enrollment_action,
        name="enrollment_action",
    ),
    path("annotators/", staff.annotators, name="annotators"),
    # Live dashboard, charts and export downloads (annotation/dashboard.py).
    path("dashboard/", dashboard.dashboard_index, name="dashboard"),
    path("dashboard/<int:pk>/", dashboard.dashboard_campaign, name="dashboard_campaign"),
    path(
        "dashboard/<int:pk>/charts/<slug:name>.svg",
        dashboard.dashboard_chart,
        name="dashboard_chart",
    ),
    path("dashboard/<int:pk>/export/", dashboard.export_download, name="export_download"),
    # Sign-up (public) and annotator pages.
    path("join/<slug:slug>/", signup.signup, name="signup"),
    path("tasks/", annotate.my_tasks, name="my_tasks"),
    path("campaigns/<int:campaign_id>/next/", annotate.annotate_next, name="annotate_next"),
    path("campaigns/<int:campaign_id>/mine/", annotate.my_annotations, name="my_annotations"),
    path("campaigns/<int:campaign_id>/finish/", annotate.finish, name="finish"),
    path("items/<item_ref:item_id>/", annotate.annotate, name="annotate"),
    path("items/<item_ref:item_id>/draft/", annotate.save_draft, name="save_draft"),
    path("items/<item_ref:item_id>/heartbeat/", annotate.heartbeat, name="heartbeat"),
    path("items/<item_ref:item_id>/submit/", annotate.submit, name="submit"),
]
