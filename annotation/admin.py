"""Django admin for annotation rows (the app's own pages are the main interface)."""

from django.contrib import admin

from annotation.models import Annotation, Annotator, Assignment, Campaign, Enrollment, Item


@admin.register(Annotator)
class AnnotatorAdmin(admin.ModelAdmin):
    list_display = ("pseudonym", "user", "source", "native_language", "consent_at", "created_at")
    list_filter = ("source",)
    search_fields = ("pseudonym", "user__username", "prolific_pid")
    readonly_fields = ("pseudonym", "created_at", "updated_at")


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ("name", "protocol", "src_lang", "tgt_lang", "overlap", "status", "created_at")
    list_filter = ("protocol", "status", "exclusive_group")
    search_fields = ("name",)
    readonly_fields = ("slug", "created_at", "updated_at")


@admin.register(Enrollment)
class EnrollmentAdmin(admin.ModelAdmin):
    list_display = ("annotator", "campaign", "status", "qualified", "finished_at")
    list_filter = ("status", "qualified")
    list_select_related = ("annotator", "campaign")


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("id", "campaign", "doc_id", "seg_id", "kind", "completed_count", "origin")
    list_filter = ("kind",)
    search_fields = ("doc_id", "source", "target", "origin_ref")
    list_select_related = ("campaign",)
    raw_id_fields = ("campaign",)


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("id", "item", "annotator", "status", "claimed_at", "expires_at")
    list_filter = ("status",)
    raw_id_fields = ("campaign", "item", "annotator")


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ("id", "item", "annotator", "status", "score", "revision", "submitted_at")
    list_filter = ("status",)
    raw_id_fields = ("campaign", "item", "annotator")
    readonly_fields = ("created_at", "updated_at", "submitted_at", "idempotency_key")
