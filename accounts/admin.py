from django.contrib import admin

from accounts.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "prefix",
        "user",
        "read_only",
        "expires_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["read_only"]
    search_fields = ["name", "prefix", "user__username"]
    # A token is made by its owner (the secret is shown to them once), never here.
    readonly_fields = ["user", "prefix", "digest", "created_at", "last_used_at"]

    def has_add_permission(self, request) -> bool:
        return False
