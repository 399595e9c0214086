from django.contrib import admin

from imports.models import ImportJob


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    """Jobs are written by the import service and its worker; the admin looks."""

    list_display = ["id", "kind", "status", "file_name", "lines_done", "lines_total",
                    "created_by", "created_at"]  # fmt: skip
    list_filter = ["kind", "status"]
    search_fields = ["file_name", "summary"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
