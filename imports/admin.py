from django.contrib import admin

from core.admin import ReadOnlyAdmin
from imports.models import ImportJob


@admin.register(ImportJob)
class ImportJobAdmin(ReadOnlyAdmin):
    """Jobs are written by the import service and its worker; the admin looks."""

    list_display = ["id", "kind", "status", "file_name", "lines_done", "lines_total",
                    "created_by", "created_at"]  # fmt: skip
    list_filter = ["kind", "status"]
    search_fields = ["file_name", "summary"]
