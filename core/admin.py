"""What the apps' admin pages share."""

from __future__ import annotations

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows that only their own code writes (an importer, a job's rounds, the engine call path):
    the admin looks, and adds or changes nothing."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
